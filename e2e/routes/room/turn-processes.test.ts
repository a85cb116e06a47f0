/**
 * Turns across web processes (docs/fair-sale.md#in-turn): buyers parked on two web processes of
 * the real web server (node:cluster, round-robin, WEB_PART=hot: the room's routes without Next)
 * and admitted together at the start buy in the shuffled place order. Each process answers its own
 * parked looks in place order; before the line moved into Redis the two processes' grabs
 * interleaved as their ticks and round trips fell, so the second process's early places bought
 * after the first one's later ones. Redis MONITOR records the order the grab scripts added the
 * buyers in; every request is a connection of its own, so round-robin spreads them over both
 * processes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Every place is admitted by the first tick after the start; no per-address grab limit (one source address here).
const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '100000', RATE_LIMITS: 'false' }));

import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { keys } from '@/lib/redis/keys';
import { shuffledIds } from '@/lib/seckill/room/room';
import { createTestUsers, waitDrained, waitFor } from '@/e2e/support/fixtures/seckill';
import { createRoomVoucher, recordBuyersAdded, solvedPayload } from '@/e2e/support/fixtures/room';
import { startWebServer, stopWebServer } from '@/e2e/support/web-server';
import { execFileSync } from 'node:child_process';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
const port = Number(process.env.E2E_PORT ?? 3201) + 7;
let web: ChildProcess | undefined;

beforeAll(async () => {
  await suite.start();
  web = await startWebServer(port, { WEB_PART: 'hot', WEB_CONCURRENCY: '2', ROOM_ADMIT_PER_SECOND: '100000', RATE_LIMITS: 'false' });
  // Two web processes under the primary (round-robin hands them connections in turn).
  expect(execFileSync('pgrep', ['-P', String(web.pid), '-f', 'workers/web-server.ts'], { encoding: 'utf8' }).trim().split('\n')).toHaveLength(2);
}, 120_000);
afterAll(async () => {
  stopWebServer(web);
  await suite.end();
});


interface Answer {
  status: number;
  json: { data?: { state?: string; challenge?: Parameters<typeof solvedPayload>[0]; purchase?: { status: string } }; error?: unknown };
}

/** One request on a connection of its own (no keep-alive), so node:cluster hands each to the next process. */
function send(token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent: false, headers: { authorization: `Bearer ${token}`, connection: 'close', ...(data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe('buyers on two web processes', () => {
  it('buy in the shuffled place order, whichever process holds each one', async () => {
    const n = 40;
    const voucherId = await createRoomVoucher(db, redis, { stock: n, startsInMs: 6000 });
    const users = await createTestUsers(db, redis, n);
    const path = `/api/seckill/${voucherId}/room`;
    // Each joins asking to buy (kept by user before the start), then hands in the solution with a
    // join that waits: parked, on whichever process took the connection.
    const joined = await Promise.all(users.map((u) => send(u.token, 'POST', path, { buy: true })));
    for (const j of joined) expect(j.json.data?.state, JSON.stringify(j.json)).toBe('waiting');
    const solutions = await Promise.all(joined.map((j) => solvedPayload(j.json.data!.challenge!)));

    const { added, stop } = await recordBuyersAdded(voucherId);
    try {
      const answers = await Promise.all(users.map((u, i) => send(u.token, 'POST', path, { altcha: solutions[i], buy: true, wait: 20_000 })));
      for (const r of answers) expect(r.json.data?.purchase, JSON.stringify(r.json)).toMatchObject({ status: 'pending' });
      await waitFor('every buyer seen by MONITOR', async () => added.length === n, 10_000, 10);
    } finally {
      stop();
    }
    const seed = (await redis.hget(keys.roomState(voucherId), 'seed'))!;
    const byPlace = shuffledIds(seed, users.map((u) => u.userId).sort((a, b) => Number(a) - Number(b)));
    expect(added).toEqual(byPlace);
    await waitDrained(db, redis, voucherId, n);
    await assertInvariants(voucherId, { drained: true });
  }, 90_000);
});
