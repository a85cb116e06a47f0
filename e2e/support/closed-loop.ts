/**
 * Closed-loop grab clients for the adaptive-admission proofs (e2e/routes/hot/adaptive-grab.test.ts
 * and the bench's `admission` scenario): `clients` clients, each sending its next grab as soon as
 * the last one was answered, rotating session tokens; a shed one (503) waits first (`shedDelay`). They run
 * in a worker thread (their own event loop, real sockets): in the caller's thread they would wait
 * behind its work and measure that instead of the server's answer time. Latencies count only the
 * answers with `okStatus`, from the last two thirds of the run (the limit has settled by then).
 */
import { Worker } from 'node:worker_threads';

export interface ClosedLoopOptions {
  port: number;
  path: string;
  tokens: string[];
  clients: number;
  ms: number;
  /** The status of an answered grab (409 for users who already hold a unit). */
  okStatus: number;
  /**
   * How long a shed client (503) waits before its next grab: a number of ms (default 10: a client
   * that ignores the answer and hammers), or 'retry-after': what the 503's Retry-After says, jittered
   * 0.5–1.5× so the shed clients do not come back all at once (what a client honouring it does).
   */
  shedDelay?: number | 'retry-after';
}

export interface ClosedLoopResult {
  p50: number;
  p90: number;
  p99: number;
  /** Answered grabs and 503s in the measured part, and answered per second there. */
  answered: number;
  shed: number;
  perSecond: number;
  /** Any other status, by status (none expected). */
  other: Record<string, number>;
}

const CLIENTS = `
const http = require('node:http');
const { parentPort, workerData: { port, path, tokens, clients, ms, okStatus, shedDelay = 10 } } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
const end = Date.now() + ms;
const measureFrom = Date.now() + ms / 3;
const latencies = [];
const other = {};
let shed = 0;
let turn = 0;
const post = (token) => new Promise((resolve, reject) => {
  const req = http.request({ host: '127.0.0.1', port, agent, method: 'POST', path, headers: { authorization: 'Bearer ' + token } }, (res) => {
    res.resume();
    res.on('end', () => resolve(res));
  });
  req.on('error', reject);
  req.end();
});
async function client() {
  while (Date.now() < end) {
    const t = performance.now();
    const res = await post(tokens[turn++ % tokens.length]);
    const status = res.statusCode;
    const measured = Date.now() >= measureFrom;
    if (status === okStatus) {
      if (measured) latencies.push(performance.now() - t);
    } else if (status === 503) {
      if (measured) shed++;
      const wait = shedDelay === 'retry-after' ? Number(res.headers['retry-after'] || 1) * 1000 * (0.5 + Math.random()) : shedDelay;
      await new Promise((r) => setTimeout(r, wait));
    } else other[status] = (other[status] || 0) + 1;
  }
}
Promise.all(Array.from({ length: clients }, client)).then(() => {
  agent.destroy();
  parentPort.postMessage({ latencies, shed, other });
});
`;

export async function closedLoopGrabs(o: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const worker = new Worker(CLIENTS, { eval: true, workerData: o });
  try {
    const { latencies, shed, other } = await new Promise<{ latencies: number[]; shed: number; other: Record<string, number> }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const sorted = latencies.sort((a, b) => a - b);
    const q = (p: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN) * 100) / 100;
    return { p50: q(0.5), p90: q(0.9), p99: q(0.99), answered: sorted.length, shed, perSecond: Math.round(sorted.length / ((o.ms * 2) / 3 / 1000)), other };
  } finally {
    await worker.terminate();
  }
}
