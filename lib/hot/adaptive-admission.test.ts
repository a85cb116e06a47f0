/**
 * Adaptive admission on the real hot server (docs/hot-server.md#adaptive-admission) with a handler
 * unlike the product's: a real Redis call, then 2 ms of CPU, so the process serves one request's
 * CPU at a time and the time of a request grows with how many are admitted together. Real
 * sockets, closed-loop clients in a worker thread; a shed client waits what the 503's Retry-After
 * says, jittered (the product's page does; so do the real-grab proof's clients). One client alone,
 * then C = 4 and 3C (4 in flight is about where this handler stops buying more per request in
 * flight: the Redis call of one overlaps the CPU of another).
 *
 * What it shows: adaptive sheds the excess at 3C and keeps the p90 of the answered requests under
 * fixed's (< 0.6×; 0.22–0.24× seen), and the room's rate is what the box serves. Not that the p90 stays flat: with
 * CPU this heavy per request, a request that arrives mid-turn waits behind the other admitted
 * requests' CPU before it is even admitted, a wait no admission-time sample sees, so at 3C the p90
 * is ~2× that at C (adaptive holds the limit at the knee, where the box serves the most). The flat
 * p90 is the real grab's claim, proven there (e2e/routes/hot/adaptive-grab.test.ts). An earlier
 * limiter, judged against the one-client time, kept this test flat by starving the box (4 in flight
 * of the 8 where the real grab still served more), which is why it failed the real grab on a host
 * whose knee was low.
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
    res.on('end', () => resolve(res));
  });
  req.on('error', reject);
  req.end();
});
async function client() {
  while (Date.now() < end) {
    const t = performance.now();
    const res = await post();
    const status = res.statusCode;
    const measured = Date.now() >= measureFrom;
    if (status === 200) {
      if (measured) latencies.push(performance.now() - t);
    } else {
      if (status !== 503) other.push(status);
      if (measured) shed++;
      // What the 503's Retry-After says, jittered 0.5–1.5× (what the product's page does).
      await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] || 1) * 1000 * (0.5 + Math.random())));
    }
  }
}
Promise.all(Array.from({ length: clients }, client)).then(() => {
  agent.destroy();
  parentPort.postMessage({ latencies, shed, other });
});
`;

/** `clients` closed-loop clients for `ms` (a shed one waits what Retry-After says); the p90 of the 200s and the count of 503s in the second half. */
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

const C = 4;

async function run(admission: AdmissionLimit) {
  const port = await start(admission);
  await load(port, 1, 1000); // warm up (JIT, Redis connection)
  const alone = await load(port, 1, 1500);
  const once = await load(port, C, 3000);
  const tripled = await load(port, 3 * C, 3000);
  // What a waiting room would admit at (lib/seckill/room/room.ts), against what was served.
  return { alone, once, tripled, limit: admission.limit, rate: admission.snapshot().ratePerSecond, servedPerSecond: tripled.answered / 1.5 };
}

// HOT_ADMISSION_PROOF=1: npm test runs it in the proof's own step (scripts/test.sh), alone on the
// cores, as the real grab's proof: in the parallel suite another file's CPU decided its throughput.
describe.skipIf(!process.env.HOT_ADMISSION_PROOF)('adaptive admission on the hot server', () => {
  it('offered concurrency tripled on a CPU-bound handler: adaptive sheds the excess and keeps the p90 under fixed’s; a fixed limit lets it triple', async () => {
    const adaptive = await run(new AdmissionLimit({ max: 1000, adaptive: true, min: 1 }));
    const fixed = await run(new AdmissionLimit({ max: 1000 }));
    const seen = JSON.stringify({ adaptive, fixed }); // in the failure message
    console.log(`adaptive admission figures: ${seen}`); // the figures docs/hot-server.md records

    // Nothing shed alone; at 3C the excess is shed and the answered are served far sooner than fixed's.
    expect(adaptive.alone.shed, seen).toBe(0);
    expect(adaptive.tripled.answered, seen).toBeGreaterThan(50);
    expect(adaptive.tripled.shed, seen).toBeGreaterThan(adaptive.once.shed);
    // The knee is where served-per-second over service time peaks: on this handler, 2 in flight
    // (one's Redis call overlaps the other's CPU), 0.22–0.24× fixed's p90 in four runs. Under the earlier knee (the lowest band
    // serving 90 % of the most) it depended on the bands a run happened to visit: 0.34× or 0.55–0.65×.
    expect(adaptive.tripled.p90, seen).toBeLessThan(0.6 * fixed.tripled.p90);
    // The power peak is where the box serves the most per unit of time a request takes, which on a
    // queue with variable times is short of the most it can serve at all: at 2 in flight one
    // request's Redis call does not always overlap another's CPU, and on a slow host that left
    // 0.75× fixed's throughput (a CI run; 0.91–0.94× in others). The same bound as the real grab's.
    expect(adaptive.tripled.answered, seen).toBeGreaterThan(0.7 * fixed.tripled.answered);

    // The room's admission rate is the rate the box serves at (Little's law), not 0, not absurd.
    expect(adaptive.rate, seen).toBeGreaterThan(0.5 * adaptive.servedPerSecond);
    expect(adaptive.rate, seen).toBeLessThan(2.5 * adaptive.servedPerSecond);

    expect(fixed.tripled.shed, seen).toBe(0);
    expect(fixed.tripled.p90, seen).toBeGreaterThan(2 * fixed.once.p90);
  }, 30_000);
});
