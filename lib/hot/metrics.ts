/**
 * Web-side metrics of the hot routes (prom-client): requests and latency by route and outcome.
 * Each web process counts on prom-client's global registry; the cluster primary serves the sum
 * over all processes (AggregatorRegistry) on WEB_METRICS_PORT, a port that is not the public one,
 * and keeps the grab rate by outcome that the console's live page shows (lib/hot/grab-rate.ts).
 * Refusals answered without Redis are counted apart, in lib/seckill/refusal-memory.ts.
 */
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, register } from 'prom-client';
import { log } from '@/lib/log';
import type { Observe } from '@/lib/hot/server';
import { processAdmission, type AdmissionSnapshot } from '@/lib/hot/admission-limit';

const ADMISSION_LIMIT = 'hmdp_hot_admission_limit';
const ADMISSION_IN_FLIGHT = 'hmdp_hot_admission_in_flight';
const ADMISSION_RATE = 'hmdp_hot_admission_rate';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** One route × outcome: its count, sum of seconds and (non-cumulative) bucket counts; +Inf is the count. */
interface Series {
  labels: { route: string; outcome: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}
const series = new Map<string, Series>();

/**
 * The two metrics as prom-client reads any metric (name, help, type, get()): the registry formats
 * them and the cluster primary's AggregatorRegistry sums them over the web processes, like its
 * own Counter and Histogram. Counted here in plain numbers: prom-client's labelled observe()
 * (label validation, hashing, bucket search) cost 0.55 µs per request, about 2.5 % of a refused grab.
 */
const requestsMetric = {
  name: 'hmdp_hot_requests_total',
  help: 'Hot-route requests answered, by route and outcome',
  type: 'counter' as const,
  aggregator: 'sum' as const,
  get: async () => ({ ...described(requestsMetric), values: [...series.values()].map((s) => ({ labels: { ...s.labels }, value: s.count })) }),
  reset: () => series.clear(),
};

const secondsMetric = {
  name: 'hmdp_hot_request_seconds',
  help: 'Hot-route latency inside the web process, by route and outcome',
  type: 'histogram' as const,
  aggregator: 'sum' as const,
  get: async () => {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of series.values()) {
      let acc = 0;
      BUCKETS.forEach((le, i) => {
        acc += s.buckets[i]!;
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: `${secondsMetric.name}_bucket` });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${secondsMetric.name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${secondsMetric.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${secondsMetric.name}_count` });
    }
    return { ...described(secondsMetric), values };
  },
  reset: () => series.clear(),
};

function described(m: { name: string; help: string; type: string; aggregator: string }) {
  return { name: m.name, help: m.help, type: m.type, aggregator: m.aggregator };
}

/**
 * The admission limit (lib/hot/admission-limit.ts) as gauges, one series per web process
 * (label `process`, its pid: the cluster's sum keeps them apart; sum them for the box, as the
 * console does). Read when scraped, nothing per request.
 */
function admissionGauge(name: string, help: string, value: (a: AdmissionSnapshot) => number) {
  const m = {
    name,
    help,
    type: 'gauge' as const,
    aggregator: 'sum' as const,
    get: async () => {
      const a = processAdmission();
      return { ...described(m), values: a ? [{ labels: { process: String(process.pid), mode: a.mode }, value: value(a) }] : [] };
    },
    reset: () => {},
  };
  return m;
}

const admissionMetrics = [
  admissionGauge(ADMISSION_LIMIT, 'Hot requests this web process admits at once now (adaptive: follows the service time; fixed: HOT_MAX_IN_FLIGHT)', (a) => a.limit),
  admissionGauge(ADMISSION_IN_FLIGHT, 'Hot requests admitted and not yet answered', (a) => a.inFlight),
  admissionGauge('hmdp_hot_admission_service_seconds', 'Mean service time of the admitted requests that waited on something, last window (adaptive only)', (a) => a.rttMs / 1000),
  admissionGauge('hmdp_hot_admission_knee_seconds', 'The service time (p90) from which more in flight stopped buying more work; the adaptive limit holds latency near it (adaptive only)', (a) => a.kneeMs / 1000),
  admissionGauge(ADMISSION_RATE, 'Requests per second this process can admit at its current limit (limit / service time; adaptive only)', (a) => a.ratePerSecond),
];

for (const m of [requestsMetric, secondsMetric, ...admissionMetrics]) {
  // A second import of this module (tests, dev reloads) finds them registered already.
  if (!register.getSingleMetric(m.name)) register.registerMetric(m as unknown as Parameters<typeof register.registerMetric>[0]);
}

/** The grab outcomes the console's live page shows: every answered grab falls in exactly one. */
export const GRAB_OUTCOMES = ['accepted', 'sold_out', 'already_bought', 'not_started', 'ended', 'limited', 'shed', 'error', 'unauthenticated', 'refused'] as const;

/**
 * accepted (ok for other routes), sold_out, already_bought, not_started, ended, limited, shed,
 * error, unauthenticated (401), or refused for any other 4xx (bad id, unknown voucher, CSRF...).
 */
export function outcomeOf(route: string, status: number, code: string | undefined): string {
  if (code === 'SHED') return 'shed';
  if (status >= 500) return 'error';
  if (status === 429) return 'limited';
  if (status === 401) return 'unauthenticated';
  if (code === 'SOLD_OUT') return 'sold_out';
  if (code === 'ALREADY_BOUGHT') return 'already_bought';
  if (code === 'NOT_STARTED') return 'not_started';
  if (code === 'ENDED') return 'ended';
  if (status < 400) return route === 'grab' ? 'accepted' : 'ok';
  return 'refused';
}

export const observeHotRoute: Observe = (route, status, seconds, code) => {
  const outcome = outcomeOf(route, status, code);
  const key = `${route}\n${outcome}`;
  let s = series.get(key);
  if (!s) series.set(key, (s = { labels: { route, outcome }, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length) }));
  s.count++;
  s.sum += seconds;
  let i = 0;
  while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
  if (i < BUCKETS.length) s.buckets[i]!++; // slower than the last bound: only in +Inf, which is the count
};

/** In each web process: answer the primary's requests for this process's metrics (prom-client installs the listener with an AggregatorRegistry). */
export function answerClusterMetrics(): void {
  new AggregatorRegistry();
}

/** In the cluster primary: GET /metrics answers the sum over every web process, GET /grab-rate the grab rate by outcome. */
export function serveClusterMetrics(port: number, host: string): Server {
  const aggregator = new AggregatorRegistry();
  return serveMetrics(port, host, () => aggregator.clusterMetrics(), aggregator.contentType);
}

/**
 * The metrics port: Prometheus text from `source` on /metrics, and on /grab-rate the grab requests
 * per second by outcome over the last few seconds, from a scrape of `source` every `everyMs` kept
 * here (so every reader sees the same rate, whichever web process asks).
 */
export function serveMetrics(port: number, host: string, source: () => Promise<string>, contentType: string = register.contentType, everyMs = 1000): Server {
  const rates = new GrabRates(source, everyMs);
  const server = createServer((req, res) => {
    if (req.url === '/grab-rate') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(rates.snapshot()));
      return;
    }
    if (req.url !== '/metrics') {
      res.statusCode = 404;
      res.end();
      return;
    }
    source().then(
      (text) => {
        res.setHeader('content-type', contentType);
        res.end(text);
      },
      (err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      },
    );
  });
  server.on('close', () => rates.stop());
  // A taken port costs the metrics, never the web server (an unhandled 'error' would end the process).
  server.on('error', (err: NodeJS.ErrnoException) => {
    rates.stop();
    log.warn({ err: err.message, port }, 'web metrics port unavailable; serving without metrics (WEB_METRICS_PORT)');
  });
  return server.listen(port, host);
}

/** The hot server's admission over every web process (the gauges summed). */
export interface AdmissionTotals {
  /** Hot requests the box admits at once now. */
  limit: number;
  inFlight: number;
  /** Requests per second the box can admit at that limit (adaptive; 0 when fixed or not yet measured). */
  ratePerSecond: number;
  /** Web processes reporting. */
  processes: number;
  /** adaptive, fixed, or mixed while processes disagree. */
  mode: string;
}

export interface GrabCounters {
  /** hmdp_hot_requests_total{route="grab"} by outcome. */
  outcomes: Record<string, number>;
  /** hmdp_hot_refusals_from_memory_total, all outcomes. */
  fromMemory: number;
  admission: AdmissionTotals;
}

const SAMPLE = /^(hmdp_hot_requests_total|hmdp_hot_refusals_from_memory_total|hmdp_hot_admission_limit|hmdp_hot_admission_in_flight|hmdp_hot_admission_rate)\{([^}]*)\}\s+([0-9.eE+-]+)$/;

/** The grab counters and the admission out of Prometheus text (one process's or the cluster's sum). */
export function parseGrabCounters(text: string): GrabCounters {
  const out: GrabCounters = { outcomes: {}, fromMemory: 0, admission: { limit: 0, inFlight: 0, ratePerSecond: 0, processes: 0, mode: '' } };
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const v = Number(m[3]);
    if (m[1] === 'hmdp_hot_refusals_from_memory_total') out.fromMemory += v;
    else if (m[1] === ADMISSION_LIMIT) {
      const a = out.admission;
      a.limit += v;
      a.processes++;
      a.mode = !a.mode || a.mode === labels.mode ? (labels.mode ?? '') : 'mixed';
    } else if (m[1] === ADMISSION_IN_FLIGHT) out.admission.inFlight += v;
    else if (m[1] === ADMISSION_RATE) out.admission.ratePerSecond += v;
    else if (labels.route === 'grab' && labels.outcome) out.outcomes[labels.outcome] = (out.outcomes[labels.outcome] ?? 0) + v;
  }
  return out;
}

export interface GrabRateSnapshot {
  /** Seconds between the two scrapes the rates come from (0 until there are two). */
  windowSeconds: number;
  at: string;
  /** Grab requests per second by outcome (every outcome of GRAB_OUTCOMES present). */
  perSecond: Record<string, number>;
  /** Of those, refusals answered from the per-process memory (no Redis), per second. */
  fromMemoryPerSecond: number;
  /** Counts since the web server started. */
  totals: Record<string, number>;
  fromMemoryTotal: number;
  /** The hot server's admission limit now, summed over the web processes (newest scrape). */
  admission: AdmissionTotals;
}

/** Keeps the last few scrapes; the rate is (newest - oldest) / their distance in time. */
export class GrabRates {
  private samples: { t: number; c: GrabCounters }[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly source: () => Promise<string>,
    everyMs = 1000,
    private readonly keep = 6,
  ) {
    this.timer = setInterval(() => void this.scrape(), everyMs);
    this.timer.unref();
    void this.scrape();
  }

  async scrape(): Promise<void> {
    try {
      const c = parseGrabCounters(await this.source());
      this.samples.push({ t: Date.now(), c });
      if (this.samples.length > this.keep) this.samples.shift();
    } catch {
      /* a process being replaced: the next scrape catches up */
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  snapshot(): GrabRateSnapshot {
    const newest = this.samples[this.samples.length - 1];
    const oldest = this.samples[0];
    const dt = newest && oldest ? (newest.t - oldest.t) / 1000 : 0;
    const perSecond: Record<string, number> = {};
    const totals: Record<string, number> = {};
    const names = new Set<string>([...GRAB_OUTCOMES, ...Object.keys(newest?.c.outcomes ?? {})]);
    const rate = (a: number, b: number) => (dt > 0 ? Math.max(0, Math.round(((a - b) / dt) * 10) / 10) : 0);
    for (const o of names) {
      totals[o] = newest?.c.outcomes[o] ?? 0;
      perSecond[o] = rate(totals[o], oldest?.c.outcomes[o] ?? 0);
    }
    return {
      windowSeconds: Math.round(dt * 10) / 10,
      at: new Date(newest?.t ?? Date.now()).toISOString(),
      perSecond,
      fromMemoryPerSecond: rate(newest?.c.fromMemory ?? 0, oldest?.c.fromMemory ?? 0),
      totals,
      fromMemoryTotal: newest?.c.fromMemory ?? 0,
      admission: newest?.c.admission ?? { limit: 0, inFlight: 0, ratePerSecond: 0, processes: 0, mode: '' },
    };
  }
}
