/**
 * The hot routes' metrics (counted in plain numbers, read by prom-client through get()): the
 * Prometheus text one process exposes, and the cluster sum the primary serves.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AggregatorRegistry, register } from 'prom-client';
import { observeHotRoute, parseGrabCounters, serveMetrics, type GrabRateSnapshot } from '@/lib/hot/metrics';
import { AdmissionLimit, setProcessAdmission } from '@/lib/hot/admission-limit';

const text = () => register.getSingleMetricAsString('hmdp_hot_request_seconds');
const line = (t: string, prefix: string) => t.split('\n').find((l) => l.startsWith(prefix))?.split(' ').pop();

describe('hot route metrics', () => {
  it('counts by route and outcome, with cumulative latency buckets, a sum and a count', async () => {
    const route = `t${Date.now()}`; // a route name of its own: other tests observe on the same registry
    for (const s of [0.0005, 0.001, 0.003, 0.003, 2]) observeHotRoute(route, 410, s, 'SOLD_OUT');
    observeHotRoute(route, 503, 0.0001, 'SHED');
    const t = await text();
    const series = `hmdp_hot_request_seconds_bucket{route="${route}",outcome="sold_out"`;
    expect(line(t, `${series},le="0.001"}`)).toBe('2'); // ≤ 1 ms, the bound included
    expect(line(t, `${series},le="0.0025"}`)).toBe('2');
    expect(line(t, `${series},le="0.005"}`)).toBe('4');
    expect(line(t, `${series},le="1"}`)).toBe('4');
    expect(line(t, `${series},le="+Inf"}`)).toBe('5');
    expect(Number(line(t, `hmdp_hot_request_seconds_sum{route="${route}",outcome="sold_out"}`))).toBeCloseTo(2.0075, 6);
    expect(line(t, `hmdp_hot_request_seconds_count{route="${route}",outcome="sold_out"}`)).toBe('5');
    const counts = await register.getSingleMetricAsString('hmdp_hot_requests_total');
    expect(line(counts, `hmdp_hot_requests_total{route="${route}",outcome="sold_out"}`)).toBe('5');
    expect(line(counts, `hmdp_hot_requests_total{route="${route}",outcome="shed"}`)).toBe('1');
  });

  it('the cluster primary sums two processes series by series', async () => {
    const route = `c${Date.now()}`;
    observeHotRoute(route, 200, 0.002, undefined);
    const one = await register.getMetricsAsJSON();
    const sum = AggregatorRegistry.aggregate([one, JSON.parse(JSON.stringify(one))]); // as if from two processes, over IPC
    const t = await sum.metrics();
    expect(line(t, `hmdp_hot_requests_total{route="${route}",outcome="ok"}`)).toBe('2');
    expect(line(t, `hmdp_hot_request_seconds_bucket{route="${route}",outcome="ok",le="0.0025"}`)).toBe('2');
    expect(line(t, `hmdp_hot_request_seconds_count{route="${route}",outcome="ok"}`)).toBe('2');
  });

  it('the admission limit: a gauge per process on /metrics, summed over the processes for /grab-rate and the console', async () => {
    const limit = new AdmissionLimit({ max: 500, adaptive: true, min: 4, initial: 40, windowMs: 10, minSamples: 1 });
    setProcessAdmission(limit);
    try {
      // Forty admitted requests that waited 2 ms and one refused, over more than a window: the
      // limit held work back while uncongested, so it grew, and a service time was measured.
      for (let i = 0; i < 40; i++) expect(limit.acquire()).toBe(true);
      expect(limit.acquire()).toBe(false);
      let now = 1000;
      for (let i = 0; i < 40; i++) limit.release(2, (now += 1));
      expect(limit.limit).toBeGreaterThan(40);
      const pid = String(process.pid);
      const metrics = serveMetrics(0, '127.0.0.1', () => register.metrics(), undefined, 50);
      await new Promise((r) => metrics.once('listening', r));
      const base = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}`;
      const t = await (await fetch(`${base}/metrics`)).text();
      expect(line(t, `hmdp_hot_admission_limit{process="${pid}",mode="adaptive"}`)).toBe(String(limit.limit));
      expect(line(t, `hmdp_hot_admission_in_flight{process="${pid}",mode="adaptive"}`)).toBe('0');
      expect(Number(line(t, `hmdp_hot_admission_service_seconds{process="${pid}",mode="adaptive"}`))).toBeCloseTo(0.002, 6);
      // The rate: the usable concurrency over the service time — the limit, or (no refusal in the
      // last window) at most twice the concurrency the window had.
      const rateGauge = Number(line(t, `hmdp_hot_admission_rate{process="${pid}",mode="adaptive"}`));
      expect(rateGauge).toBeCloseTo(limit.snapshot().ratePerSecond, 3);
      expect(rateGauge).toBeGreaterThan(0);
      expect(rateGauge).toBeLessThanOrEqual(limit.limit / 0.002 + 1e-6);
      await new Promise((r) => setTimeout(r, 150));
      const rate = (await (await fetch(`${base}/grab-rate`)).json()) as GrabRateSnapshot;
      expect(rate.admission).toMatchObject({ limit: limit.limit, inFlight: 0, processes: 1, mode: 'adaptive' });
      metrics.close();

      // Two processes: the primary keeps a series each (its pid), the console sums them.
      const one = await register.getMetricsAsJSON();
      const other = JSON.parse(JSON.stringify(one).replaceAll(`"process":"${pid}"`, '"process":"other"')) as typeof one;
      const summed = parseGrabCounters(await AggregatorRegistry.aggregate([one, other]).metrics());
      expect(summed.admission).toMatchObject({ limit: 2 * limit.limit, processes: 2, mode: 'adaptive' });
    } finally {
      setProcessAdmission(undefined);
    }
  });

  it('a metrics port already taken costs the metrics, not the process that asked for it', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const port = (squatter.address() as AddressInfo).port;
    // Without a handler the 'error' event would be thrown: in the web server's cluster primary,
    // that took every web process down with it (seen: EADDRINUSE, exit 1).
    const metrics = serveMetrics(port, '127.0.0.1', () => register.metrics());
    await new Promise((r) => setTimeout(r, 200));
    expect(metrics.listening).toBe(false);
    metrics.close();
    squatter.close();
  });
});
