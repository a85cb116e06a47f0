/**
 * The adaptive admission limit against a synthetic queueing server (docs/hot-server.md#adaptive-admission):
 * `knee` requests are served in parallel at full speed, above that they share the capacity
 * (processor sharing), so service time grows with concurrency past the knee. Closed-loop clients
 * send again as soon as they are answered; a shed client retries 5 ms later. Virtual time.
 */
import { describe, expect, it } from 'vitest';
import { AdmissionLimit } from '@/lib/hot/admission-limit';

const TICK = 0.1;

interface Host {
  /** Service time with the box uncongested (ms). */
  serviceMs: number;
  /** Requests served in parallel at full speed. */
  knee: number;
}
interface Phase {
  clients: number;
  seconds: number;
}

/** Runs the phases one after the other; per phase, the latencies of its last half and what was shed then. */
function simulate(host: Host, limit: AdmissionLimit, phases: Phase[]) {
  const out: { latencies: number[]; shed: number; limits: number[] }[] = [];
  const jobs: { start: number; left: number; client: number }[] = [];
  const nextSend: number[] = [];
  let t = 0;
  for (const phase of phases) {
    while (nextSend.length < phase.clients) nextSend.push(t);
    const end = t + phase.seconds * 1000;
    const measureFrom = t + (phase.seconds * 1000) / 2;
    const res = { latencies: [] as number[], shed: 0, limits: [] as number[] };
    for (; t < end; t += TICK) {
      for (let c = 0; c < phase.clients; c++) {
        if (nextSend[c]! > t) continue;
        if (limit.acquire()) {
          jobs.push({ start: t, left: host.serviceMs, client: c });
          nextSend[c] = Infinity;
        } else {
          nextSend[c] = t + 5;
          if (t >= measureFrom) res.shed++;
        }
      }
      const speed = Math.min(1, host.knee / Math.max(1, jobs.length));
      for (let i = jobs.length - 1; i >= 0; i--) {
        const j = jobs[i]!;
        j.left -= TICK * speed;
        if (j.left > 1e-9) continue;
        jobs.splice(i, 1);
        const ms = t + TICK - j.start;
        limit.release(ms, t + TICK);
        if (t >= measureFrom) res.latencies.push(ms);
        nextSend[j.client] = t + TICK;
      }
      if (t >= measureFrom && Math.round(t / TICK) % 1000 === 0) res.limits.push(limit.limit);
    }
    out.push(res);
  }
  return out;
}

function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length * 0.9)]!;
}

describe('adaptive admission limit (synthetic queueing server)', () => {
  // The same limiter, untuned, on a fast host and on one ten times slower with a quarter of the parallelism.
  it.each([
    { name: 'fast host', serviceMs: 5, knee: 20 },
    { name: 'slow host', serviceMs: 50, knee: 5 },
  ])('$name: offered concurrency tripled, the limit settles near the knee and latency stays within 2x the uncongested time; a fixed high limit lets it triple', (host) => {
    const phases = [
      { clients: host.knee, seconds: 20 },
      { clients: 3 * host.knee, seconds: 20 },
    ];
    const [calm, tripled] = simulate(host, new AdmissionLimit({ max: 2048, adaptive: true, min: 2 }), phases);
    const [fixedCalm, fixedTripled] = simulate(host, new AdmissionLimit({ max: 2048 }), phases);

    // At the knee nothing queues either way.
    expect(p90(calm!.latencies)).toBeLessThan(1.2 * host.serviceMs);
    expect(p90(fixedCalm!.latencies)).toBeLessThan(1.2 * host.serviceMs);
    // Tripled: latency within 2x the uncongested time, the limit near the knee, the excess shed.
    expect(p90(tripled!.latencies)).toBeLessThan(2 * host.serviceMs);
    expect(tripled!.limits.length).toBeGreaterThan(10);
    for (const l of tripled!.limits) {
      expect(l).toBeGreaterThanOrEqual(host.knee);
      expect(l).toBeLessThanOrEqual(2.5 * host.knee);
    }
    expect(tripled!.shed).toBeGreaterThan(0);
    // The fixed limit admits everyone, and latency triples with the load.
    expect(fixedTripled!.shed).toBe(0);
    expect(p90(fixedTripled!.latencies)).toBeGreaterThan(2.7 * host.serviceMs);
  });
});
