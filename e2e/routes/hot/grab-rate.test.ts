/**
 * The console's grab rate (GET /api/admin/hot/grab-rate): admin only, and its numbers move after
 * real grabs over HTTP through a hot server whose observe hook is the production one
 * (lib/hot/metrics.ts), read back through a real metrics port.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const METRICS_PORT = vi.hoisted(() => {
  const port = 3711;
  process.env.WEB_METRICS_PORT = String(port);
  return port;
});

import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { register } from 'prom-client';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { GET as grabRateRoute } from '@/app/api/admin/hot/grab-rate/route';
import { hotRoutes } from '@/app/api/hot-routes';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { observeHotRoute, parseGrabCounters, serveMetrics } from '@/lib/hot/metrics';
import { readGrabRate } from '@/lib/hot/grab-rate';
import { AdmissionLimit, setProcessAdmission } from '@/lib/hot/admission-limit';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { createTestUsers, createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

const suite = orderWorkerSuite();
let metrics: Server;
let hot: Server;
let hotPort: number;
let f: ConsoleFixture;
// The hot server's admission as the web server wires it: adaptive, registered for the metrics.
const admission = new AdmissionLimit({ max: 10_000, adaptive: true, min: 8, initial: 300 });

beforeAll(async () => {
  await suite.start();
  metrics = serveMetrics(METRICS_PORT, '127.0.0.1', () => register.metrics(), undefined, 200);
  setProcessAdmission(admission);
  hot = createHotServer({
    routes: hotRoutes,
    admission,
    observe: observeHotRoute,
    fallback: (_req, res) => writeReply(res, { status: 404, body: {} }),
  });
  await new Promise<void>((r) => hot.listen(0, '127.0.0.1', () => r()));
  hotPort = (hot.address() as AddressInfo).port;
  f = await createConsoleFixture(db, redis);
});

afterAll(async () => {
  hot.close();
  metrics.close();
  setProcessAdmission(undefined);
  await suite.end();
});

function post(path: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: hotPort, path, method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /api/admin/hot/grab-rate', () => {
  it('refuses everyone but an admin', async () => {
    expect((await callRoute(grabRateRoute)).status).toBe(401);
    expect((await callRoute(grabRateRoute, { token: f.consumer.token })).status).toBe(403);
    expect((await callRoute(grabRateRoute, { token: f.merchantA.token })).status).toBe(403);
    expect((await callRoute(grabRateRoute, { token: f.admin.token })).status).toBe(200);
  });

  it('says so when there is no metrics port, instead of zeros', async () => {
    expect(await readGrabRate(0)).toEqual({ enabled: false, reason: expect.stringContaining('WEB_METRICS_PORT') });
  });

  it('the rate by outcome moves after grabs: accepted, sold out (some from memory), unauthenticated', async () => {
    const before = parseGrabCounters(await register.metrics());
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const users = await createTestUsers(db, redis, 40);
    const statuses: number[] = [];
    // Without a session while the sale is on (once it is remembered sold out, a stranger hears 410 too).
    for (let i = 0; i < 5; i++) statuses.push(await post(`/api/seckill/${voucherId}`));
    for (const u of users) statuses.push(await post(`/api/seckill/${voucherId}`, u.token));
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 410)).toHaveLength(37);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);

    const after = parseGrabCounters(await register.metrics());
    expect((after.outcomes.accepted ?? 0) - (before.outcomes.accepted ?? 0)).toBe(3);
    expect((after.outcomes.sold_out ?? 0) - (before.outcomes.sold_out ?? 0)).toBe(37);
    expect((after.outcomes.unauthenticated ?? 0) - (before.outcomes.unauthenticated ?? 0)).toBe(5);
    expect(after.fromMemory - before.fromMemory).toBeGreaterThan(30); // sequential grabs: all but the first refusal skip Redis

    // The rates are sampled every 200 ms: a sample taken while the grabs above were still going has
    // rates already but not every grab, so wait for one that counts them all.
    const r = await waitFor('the rates to show the grabs', async () => {
      const res = await callRoute(grabRateRoute, { token: f.admin.token });
      const d = res.json.data;
      const all = d.enabled && d.totals?.sold_out >= 37 && d.totals.accepted >= 3 && d.totals.unauthenticated >= 5;
      return all && d.perSecond?.accepted > 0 && d.perSecond.sold_out > 0 && d.perSecond.unauthenticated > 0 && d.fromMemoryPerSecond > 0 ? d : null;
    }, 5000, 100);
    expect(Object.keys(r.perSecond)).toEqual(expect.arrayContaining(['accepted', 'sold_out', 'already_bought', 'not_started', 'ended', 'limited', 'shed', 'error', 'unauthenticated']));
    expect(r.windowSeconds).toBeGreaterThan(0);
    expect(r.totals.sold_out).toBeGreaterThanOrEqual(37);
    // Beside the rate, the admission limit the console shows: this process's, adaptive, where it
    // started (only the grabs that went to Redis are samples, fewer than a window needs).
    expect(r.admission).toEqual({ limit: 300, inFlight: 0, ratePerSecond: expect.any(Number), processes: 1, mode: 'adaptive' });
  });
});
