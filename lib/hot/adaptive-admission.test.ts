/**
 * Adaptive admission on the real hot server (docs/hot-server.md#adaptive-admission): a hot route
 * whose handler makes a real Redis call and then burns CPU, so the process serves one at a time
 * and the time of a request grows with how many are admitted together. Real sockets, closed-loop
 * clients in a worker thread (a shed client retries 10 ms later): one client to show the box
 * uncongested, then 1x, then 3x the concurrency. Adaptive, the p90 of the answered requests stays flat and the excess
 * gets 503; with a fixed limit every request is admitted and the p90 triples with the load.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { route } from '@/lib/http/route';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { AdmissionLimit } from '@/lib/hot/admission-limit';
import { closeRedis, redis } from '@/lib/redis/client';

const BURN_MS = 2;

function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* the CPU this request costs */
  }
}

const work = route({ auth: 'none' }, async () => {
  await redis.ping();
  burn(BURN_MS);
  return { ok: true };
});

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) s.close();
  await closeRedis();
});

async function start(admission: AdmissionLimit): Promise<number> {
  const server = createHotServer({
    routes: [{ name: 'work', method: 'POST', path: '/api/work', handler: work }],
    admission,
    fallback: (_req, res) => writeReply(res, { status: 404, body: {} }),
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/**
 * The clients run in a worker thread (real sockets, their own event loop): in the server's thread
 * they would wait behind its CPU bursts and measure those instead of the server's answer time.
 */
const CLIENTS = `
const http = require('node:http');
const { parentPort, workerData: { port, clients, ms } } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const end = Date.now() + ms;
const measureFrom = Date.now() + ms / 2;
const latencies = [];
const other = [];
let shed = 0;
const post = () => new Promise((resolve, reject) => {
  const req = http.request({ host: '127.0.0.1', port, agent, method: 'POST', path: '/api/work' }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode));
  });
  req.on('error', reject);
  req.end();
});
async function client() {
  while (Date.now() < end) {
    const t = performance.now();
    const status = await post();
    const measured = Date.now() >= measureFrom;
    if (status === 200) {
      if (measured) latencies.push(performance.now() - t);
    } else {
      if (status !== 503) other.push(status);
      if (measured) shed++;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
Promise.all(Array.from({ length: clients }, client)).then(() => {
  agent.destroy();
  parentPort.postMessage({ latencies, shed, other });
});
`;

/** `clients` closed-loop clients for `ms` (a shed one retries 10 ms later); the p90 of the 200s and the count of 503s in the second half. */
async function load(port: number, clients: number, ms: number) {
  const worker = new Worker(CLIENTS, { eval: true, workerData: { port, clients, ms } });
  const { latencies, shed, other } = await new Promise<{ latencies: number[]; shed: number; other: number[] }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  expect(other).toEqual([]); // nothing but 200 and 503
  return { p90: p90(latencies), answered: latencies.length, shed };
}

function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length * 0.9)] ?? NaN;
}

async function run(admission: AdmissionLimit) {
  const port = await start(admission);
  await load(port, 1, 1000); // warm up (JIT, Redis connection)
  const alone = await load(port, 1, 1500);
  const once = await load(port, 4, 3000);
  const tripled = await load(port, 12, 3000);
  // What a waiting room would admit at (lib/seckill/room/room.ts), against what was served.
  return { alone, once, tripled, limit: admission.limit, rate: admission.snapshot().ratePerSecond, servedPerSecond: tripled.answered / 1.5 };
}

describe('adaptive admission on the hot server', () => {
  it('offered concurrency tripled: adaptive keeps the p90 of answered requests flat and sheds the excess; a fixed limit lets it triple', async () => {
    const adaptive = await run(new AdmissionLimit({ max: 1000, adaptive: true, min: 1 }));
    const fixed = await run(new AdmissionLimit({ max: 1000 }));
    const seen = JSON.stringify({ adaptive, fixed }); // in the failure message
    console.log(`adaptive admission figures: ${seen}`); // the figures docs/hot-server.md records

    // The box learned its uncongested time alone, then shed at 1x and 3x alike.
    expect(adaptive.alone.shed, seen).toBe(0);
    expect(adaptive.tripled.answered, seen).toBeGreaterThan(50);
    expect(adaptive.tripled.shed, seen).toBeGreaterThan(adaptive.once.shed);
    expect(adaptive.tripled.p90, seen).toBeLessThan(1.5 * adaptive.once.p90);
    expect(adaptive.tripled.p90, seen).toBeLessThan(0.6 * fixed.tripled.p90);

    // The room's admission rate is the rate the box serves at (Little's law), not 0, not absurd.
    expect(adaptive.rate, seen).toBeGreaterThan(0.5 * adaptive.servedPerSecond);
    expect(adaptive.rate, seen).toBeLessThan(2.5 * adaptive.servedPerSecond);

    expect(fixed.tripled.shed, seen).toBe(0);
    expect(fixed.tripled.p90, seen).toBeGreaterThan(2 * fixed.once.p90);
  }, 30_000);
});
