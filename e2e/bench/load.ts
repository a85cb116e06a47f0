/**
 * The two load generators of the bench: closed loop (autocannon: C connections, each sending
 * its next request when the previous answered) and open loop at a fixed offered rate.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface StormOptions {
  label: string;
  url: string;
  path: string;
  method: 'GET' | 'POST';
  /** Bearer tokens, used round-robin (one per request). */
  tokens?: string[];
  connections: number;
  durationS: number;
  rate?: number;
  onResponse?: (status: number, body: string) => void;
}

export interface StormResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  errors: number;
  durationS: number;
}

export type Progress = (text: string, final?: boolean) => void;

/**
 * A fixed offered rate, open loop: request i is due at t0 + i/rate whether or not earlier ones
 * have answered, and its latency counts from when it was due (no coordinated omission).
 * autocannon's own rate option sends each connection's quota for the second in one burst at
 * the top of the second, which measures burst queueing rather than a steady 500 req/s.
 */
export function openLoop(o: StormOptions & { rate: number }, line: Progress): Promise<StormResult> {
  const tokens = o.tokens ?? [];
  const target = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const total = Math.round(o.rate * o.durationS);
  const interval = 1000 / o.rate;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  let finished = 0;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const settle = () => {
      if (++finished < total) return;
      const durationS = (performance.now() - t0) / 1000;
      agent.destroy();
      line(`${finished} requests in ${durationS.toFixed(1)} s`, true);
      latencies.sort((a, b) => a - b);
      const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
      const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
      resolve({ requests, rps: requests / durationS, p50Ms: pct(0.5), p99Ms: pct(0.99), statuses, errors, durationS });
    };
    const fire = (i: number) => {
      const due = t0 + i * interval;
      const headers: Record<string, string> = tokens.length ? { authorization: `Bearer ${tokens[i % tokens.length]}` } : {};
      const req = http.request({ agent, host: target.hostname, port: target.port, path: o.path, method: o.method, headers, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          latencies.push(performance.now() - due);
          const code = String(res.statusCode);
          statuses[code] = (statuses[code] ?? 0) + 1;
          o.onResponse?.(res.statusCode ?? 0, Buffer.concat(chunks).toString());
          settle();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        settle();
      });
      req.end();
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && t0 + sent * interval <= now) fire(sent++);
      const elapsed = (now - t0) / 1000;
      line(`${elapsed.toFixed(0)}/${o.durationS} s · ${sent} sent at ${o.rate} req/s · ${finished} answered`);
      if (sent < total) setTimeout(tick, Math.max(0, t0 + sent * interval - performance.now()));
    };
    tick();
  });
}

export function closedLoop(o: StormOptions, line: Progress): Promise<StormResult> {
  const tokens = o.tokens ?? [];
  let turn = 0;
  let done = 0;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: o.url,
        connections: o.connections,
        duration: o.durationS,
        timeout: 10,
        requests: [
          {
            method: o.method,
            path: o.path,
            setupRequest: (req) =>
              tokens.length ? { ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[turn++ % tokens.length]}` } } : req,
            ...(o.onResponse ? { onResponse: (status: number, body: string) => o.onResponse!(status, body) } : {}),
          },
        ],
      },
      (err, r) => {
        clearInterval(ticker);
        if (err) return reject(err);
        line(`${done} requests in ${r.duration.toFixed(1)} s`, true);
        const statuses = Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, Number(v.count)]));
        const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
        resolve({ requests, rps: requests / r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, statuses, errors: r.errors, durationS: r.duration });
      },
    );
    instance.on('response', () => done++);
    const ticker = setInterval(() => {
      const s = (Date.now() - started) / 1000;
      line(`${s.toFixed(0)}/${o.durationS} s · ${done} requests · ${(done / Math.max(s, 0.001)).toFixed(0)} req/s`);
    }, 1000);
  });
}
