/**
 * The hot server's admission limit: how many complete, authenticated hot requests one process
 * serves at once (docs/hot-server.md#adaptive-admission). Fixed, it is HOT_MAX_IN_FLIGHT; adaptive,
 * it follows the measured service time of the admitted requests themselves, gradient-style (after
 * Netflix's concurrency-limits Gradient2 and Vegas limits). Per window (≥ `windowMs`,
 * ≥ `minSamples` samples) it compares the window's p90 service time (`quantile`; the mean hid the
 * tail a client sees) with a target:
 *
 *   target = max(tolerance · knee, floorMs)            (1.5 · knee)
 *   slow   = max(congestedAt · knee, floorMs)          (2 · knee)
 *   knee   = the service time from which more in flight stopped buying more work: the band of
 *            service time at which served-per-second over service time (Kleinrock's power) is
 *            highest, on a curve it learns from its own windows (`learn`)
 *   rtt ≤ target:  limit ← max(limit + 1, limit · (1 + smoothing · (min(2, target / rtt) − 1)))
 *                  only if something was refused (more is offered than admitted)
 *   between:       the limit holds (a dead band, as TCP Vegas's α and β)
 *   rtt > slow:    limit ← inUse · (1 − smoothing · (1 − max(½, slow / rtt)))
 *                  inUse = min(limit, the window's peak in flight); SLOW_WINDOWS such windows in a row
 *
 * Why a knee and not the fastest time seen: an event loop answers in turns, and more requests per
 * turn make each slower while the process does more work — one client's 0.3 ms and eight clients'
 * 0.7 ms can both be the box serving well. Judged against the quiet time, a limit starves the box
 * (it held a 2-core host at 4 in flight and half its throughput); judged against a fixed floor of
 * a few ms, it never acts on a host whose knee is at 1 ms (the 3C load ran at 3× the latency). The
 * knee is where the curve of served-per-second against service time flattens, so a load stepping
 * up that still buys throughput is never congestion, and a load past it is, on a fast or a slow host.
 *
 * These keep it from shedding a load the box serves well:
 *  - `floorMs`: a window whose p90 is under half a millisecond is never congestion (timer noise);
 *  - after an idle pause (nothing in flight for a window) the arriving load is measured from its
 *    first answer, and its first ARRIVING_WINDOWS windows cannot lower the limit (connections
 *    opening, code warming);
 *  - a slower window while the throughput of the last windows is well above the usual (> 1.25×) is
 *    a load stepping up that the process is absorbing: the limit holds until the usual has caught up;
 *  - a slower window is congestion only while the process serves about what it usually serves
 *    (≥ 70 % of a smoothed recent throughput): its own queue. Slower while serving much less is
 *    a neighbour taking the CPU (or a stall holding every request at once) — shedding would only
 *    serve less — so the limit holds; a decrease also needs SLOW_WINDOWS slow windows in a row;
 *  - a decrease starts from what was actually in flight, not from an unused limit, and the limit
 *    only grows while it refuses work, so an idle process keeps a large limit without acting on it;
 *  - a slower window while the event loop sat idle more than half the time (BUSY_LOOP) is something
 *    the process waits on (a broker, Redis), not its own queue: the limit holds.
 * Above the knee (service time ∝ concurrency, throughput flat) the limit settles where the
 * service time is about the target and the excess is shed at once (503 + Retry-After).
 *
 * Cost per request: a compare and two additions on admission (one more on a refusal), a
 * subtraction, a compare and two additions on release; no allocation and no timer. The limit is
 * recomputed inside release() once a window has passed with enough samples: an idle process does
 * nothing. `trace` (HOT_ADMISSION_TRACE) appends one JSON line per window to a file, to see why it
 * moved.
 */

import { appendFileSync } from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

export interface AdmissionLimitOptions {
  /** The hard ceiling (HOT_MAX_IN_FLIGHT). A fixed limit is this. */
  max: number;
  /** Adaptive: the limit follows the service time; otherwise it stays at `max`. */
  adaptive?: boolean;
  /** The floor the adaptive limit never goes below; default 8. */
  min?: number;
  /**
   * Where the adaptive limit starts; default `max`. An adaptive limit is never stricter than the
   * fixed one before it has measured congestion: a sale's first burst (1 000 buyers at once) finds
   * a fresh process with no window behind it, and starting lower shed that burst with 503s the box
   * could have served (docs/hot-server.md#adaptive-admission).
   */
  initial?: number;
  /** A window's length; default 100 ms. */
  windowMs?: number;
  /** Samples a window needs before it counts; default 16. */
  minSamples?: number;
  /** Service time up to this multiple of the knee counts as uncongested (the limit may grow); default 1.5 (Gradient2's). */
  tolerance?: number;
  /**
   * Service time over this multiple of the knee is congestion (the limit comes down); between the
   * two the limit holds. Default 2. A dead band as TCP Vegas's α and β: one threshold for both
   * made the limit saw, and cut a load at the knee whose windows' p90 wanders ±30 % by itself.
   */
  congestedAt?: number;
  /** A window's service time (the statistic) under this is never congestion, ms; default 0.5. */
  floorMs?: number;
  /** Share of a computed decrease applied per window; default 0.5. */
  smoothing?: number;
  /**
   * The window statistic the limit controls: this quantile of the window's service times (default
   * 0.9, read from a fixed log-scale histogram, ±6 %), or the mean when 0.
   */
  quantile?: number;
  /** A file to append one JSON line per window to (HOT_ADMISSION_TRACE): a diagnosis aid, off by default. */
  trace?: string;
}

/** Histogram buckets: bucket i holds service times up to BUCKET_BASE_MS · BUCKET_RATIO^i (0.02 ms … ~8 s). */
const BUCKETS = 128;
const BUCKET_BASE_MS = 0.02;
const BUCKET_RATIO = 1.11;
const LOG_RATIO = Math.log(BUCKET_RATIO);

function bucketOf(ms: number): number {
  if (ms <= BUCKET_BASE_MS) return 0;
  const i = Math.ceil(Math.log(ms / BUCKET_BASE_MS) / LOG_RATIO);
  return i < BUCKETS ? i : BUCKETS - 1;
}

/** What the console and the waiting room read (one process). */
export interface AdmissionSnapshot {
  mode: 'adaptive' | 'fixed';
  limit: number;
  max: number;
  min: number;
  inFlight: number;
  /** Mean service time of the admitted requests in the last window, ms (0 before the first). */
  rttMs: number;
  /** The knee the target follows: the service time (the statistic, ms) from which more in flight stopped buying more work; 0 before the first window. */
  kneeMs: number;
  /** Admitted requests completed per second in the last window. */
  admittedPerSecond: number;
  /**
   * What the process can admit per second: when the limit refused work in the last window, what
   * that window served (the rate at the limit); otherwise at most twice the concurrency it actually
   * had over the service time (Little's law; an idle process's large limit is no promise); 0 until measured.
   */
  ratePerSecond: number;
}

/** Windows after an idle pause that cannot lower the limit. */
const ARRIVING_WINDOWS = 2;
/** Bands of the served-per-service-time curve: band i holds windows whose statistic is ≤ KNEE_BASE_MS · KNEE_RATIO^i. */
const KNEE_BANDS = 40;
const KNEE_BASE_MS = 0.05;
const KNEE_RATIO = 1.25;
const KNEE_LOG_RATIO = Math.log(KNEE_RATIO);
/** The weight of a window in its band's moving average. */
const KNEE_WEIGHT = 0.25;
/**
 * A window in which the event loop was busy less than this share of the time cannot lower the
 * limit: the process has no queue of its own, so a slower answer is something it waits on (the
 * broker, Redis) and shedding would not make that faster. (One client alone keeps the grab's loop
 * ~45 % busy; four, ~90 %.)
 */
const BUSY_LOOP = 0.5;
/** Slow windows in a row before the limit comes down (one or two are a stall as often as a queue). */
const SLOW_WINDOWS = 3;

export class AdmissionLimit {
  /** The current limit (an integer): a request is admitted while inFlight < limit. */
  limit: number;
  inFlight = 0;
  readonly max: number;
  readonly min: number;
  readonly adaptive: boolean;
  private estimate: number;
  private readonly windowMs: number;
  private readonly minSamples: number;
  private readonly tolerance: number;
  private readonly congestedAt: number;
  private readonly floorMs: number;
  private readonly smoothing: number;
  private readonly quantile: number;
  private trace: string | undefined;
  /** The current window's service times, by bucket (adaptive with a quantile only). */
  private readonly histogram: Uint32Array;
  // The current window, in plain numbers.
  private windowStart = -1;
  private count = 0;
  private sumMs = 0;
  private peak = 0;
  private refused = 0;
  // What the last windows measured.
  private kneeMs = 0;
  /** Per band of service time (KNEE_RATIO apart), a moving average of what the windows there served per second. */
  private readonly served = new Float64Array(KNEE_BANDS);
  private usualPerSecond = 0;
  private recentPerSecond = 0;
  /** Congested windows in a row. */
  private congested = 0;
  /** Windows left, after an idle pause, in which the arriving load cannot lower the limit. */
  private arriving = 0;
  /** When the last release left nothing in flight (-1: something is in flight). */
  private idleSince = -1;
  /** The event loop's utilization counters at the last window's end. */
  private loopAt: EventLoopUtilization | undefined;
  private lastRttMs = 0;
  private lastPerSecond = 0;
  private lastPeak = 0;
  private lastRefused = 0;

  constructor(o: AdmissionLimitOptions) {
    this.max = Math.max(1, o.max);
    this.adaptive = o.adaptive ?? false;
    this.min = Math.max(1, Math.min(o.min ?? 8, this.max));
    this.estimate = this.adaptive ? clamp(o.initial ?? this.max, this.min, this.max) : this.max;
    this.limit = Math.floor(this.estimate);
    this.windowMs = o.windowMs ?? 100;
    this.minSamples = Math.max(1, o.minSamples ?? 16);
    this.tolerance = o.tolerance ?? 1.5;
    this.congestedAt = Math.max(this.tolerance, o.congestedAt ?? 2);
    this.floorMs = o.floorMs ?? 0.5;
    this.smoothing = o.smoothing ?? 0.5;
    this.quantile = o.quantile ?? 0.9;
    this.trace = o.trace || undefined;
    this.histogram = new Uint32Array(this.adaptive && this.quantile > 0 ? BUCKETS : 0);
  }

  /** A slot, if one is free under the limit (`ceilingOnly`: under the hard ceiling, whatever the limit). */
  acquire(ceilingOnly = false): boolean {
    if (this.inFlight >= (ceilingOnly ? this.max : this.limit)) {
      this.refused++;
      return false;
    }
    if (++this.inFlight > this.peak) this.peak = this.inFlight;
    return true;
  }

  /**
   * Gives a slot back. `serviceMs`: how long the request held it, or a negative number when it
   * is no sample (answered in the same turn it was admitted: it never waited on anything, so its
   * time says nothing about congestion). `now`: performance.now() (or a simulation's clock).
   */
  release(serviceMs: number, now: number): void {
    this.inFlight--;
    if (!this.adaptive) return;
    // Admitted more than a window after the process had nothing in flight: it was idle.
    const admittedAt = serviceMs < 0 ? now : now - serviceMs;
    if (this.windowStart < 0 || (this.idleSince >= 0 && admittedAt - this.idleSince > this.windowMs)) this.restartWindow(now);
    this.idleSince = this.inFlight === 0 ? now : -1;
    if (serviceMs < 0) return;
    this.count++;
    this.sumMs += serviceMs;
    if (this.quantile > 0) this.histogram[bucketOf(serviceMs)]!++;
    if (now - this.windowStart >= this.windowMs && this.count >= this.minSamples) this.update(now);
  }

  /**
   * A request admitted more than a window after nothing was in flight: the process was idle. The
   * load that comes now is measured from its first answer (a window spanning the pause would count
   * the pause as throughput lost), and its first windows cannot lower the limit (connections
   * opening, code warming: the load is arriving, not queueing).
   */
  private restartWindow(now: number): void {
    this.windowStart = now;
    this.count = 0;
    this.sumMs = 0;
    if (this.quantile > 0) this.histogram.fill(0);
    this.arriving = ARRIVING_WINDOWS;
  }

  /**
   * Records what a window served at its service time: per band of service time, a moving average
   * of what the windows there served (a quarter per window, from nothing: a band seen once or twice
   * — a transient, a lucky window — weighs little). A band not seen keeps its value: the knee stays
   * known while the limit holds the load above it, and when a slower host brings the load back
   * down to it, what it serves there now replaces what it served before.
   */
  private learn(rtt: number, perSecond: number): void {
    const band = Math.min(KNEE_BANDS - 1, Math.max(0, Math.ceil(Math.log(rtt / KNEE_BASE_MS) / KNEE_LOG_RATIO)));
    this.served[band]! += (perSecond - this.served[band]!) * KNEE_WEIGHT;
  }

  /**
   * The knee: the service time of the band where served-per-second over service time is highest
   * (Kleinrock's power: below the knee more in flight buys throughput at about the same time; past
   * it the time grows and the throughput does not; by the bands' moving averages; the middle of
   * that band, ms). Before anything was learned, `rtt`. An earlier rule, the lowest band serving
   * 90 % of the most, followed the event loop's batching gains up: on this box more in flight keeps
   * buying 10–20 % more grabs per doubling at twice the time, and one window of a neighbour going
   * quiet at a slow band moved the knee up a band and the 3C latency with it.
   */
  private knee(rtt: number): number {
    const best = this.served;
    let most = 0;
    let at = -1;
    for (let i = 0; i < KNEE_BANDS; i++) {
      const power = best[i]! / KNEE_RATIO ** i;
      if (power > most) {
        most = power;
        at = i;
      }
    }
    if (at < 0) return rtt;
    return KNEE_BASE_MS * KNEE_RATIO ** (at - 0.5);
  }

  /** The window's `quantile` service time (the upper edge of its histogram bucket), or its mean; clears the histogram. */
  private windowStatistic(): number {
    if (this.quantile <= 0) return this.sumMs / this.count;
    const h = this.histogram;
    const rank = Math.ceil(this.quantile * this.count);
    let seen = 0;
    let i = 0;
    while (i < BUCKETS - 1 && (seen += h[i]!) < rank) i++;
    h.fill(0);
    return BUCKET_BASE_MS * BUCKET_RATIO ** i;
  }

  private update(now: number): void {
    const rtt = this.windowStatistic();
    const perSecond = (this.count * 1000) / (now - this.windowStart);
    this.lastPerSecond = perSecond;
    this.lastRttMs = this.sumMs / this.count;
    this.lastPeak = this.peak;
    this.lastRefused = this.refused;
    if (this.arriving === 0) this.learn(rtt, perSecond);
    this.kneeMs = this.knee(rtt);
    const L = this.estimate;
    const target = Math.max(this.tolerance * this.kneeMs, this.floorMs);
    const slow = Math.max(this.congestedAt * this.kneeMs, this.floorMs);
    const loopNow = performance.eventLoopUtilization();
    const loop = this.loopAt === undefined ? 1 : performance.eventLoopUtilization(loopNow, this.loopAt).utilization;
    const busy = loop >= BUSY_LOOP;
    this.loopAt = loopNow;
    // What this process has served per second lately (smoothed over ~8 windows): a window that
    // serves much less than that was held up by something else.
    const usual = this.usualPerSecond;
    this.usualPerSecond = usual === 0 ? perSecond : usual + (perSecond - usual) / 8;
    let next: number;
    // The last two or three windows' throughput (one window alone swings with how its end fell).
    const recent = this.recentPerSecond;
    this.recentPerSecond = recent === 0 ? perSecond : (recent + perSecond) / 2;
    // A slower window that is not this process's own queue holds the limit and restarts the count
    // of slow windows (a held window between two slow ones breaks the run):
    const notOwnQueue =
      // the first windows after an idle pause: the load is arriving (see restartWindow);
      this.arriving > 0 ||
      // serving clearly more than it usually does: the offered load just stepped up and the process
      // is absorbing it (connections opening, turns filling) — below the knee by definition, the
      // knee being where more in flight stops buying more work; once the usual has caught up, a
      // time still over the target is congestion;
      (usual > 0 && this.recentPerSecond > 1.25 * usual) ||
      // the event loop sat mostly idle: the process waits on something (a broker that lost its
      // leader, a slow Redis), and shedding would only turn late answers into 503s, and keep doing
      // so after the dependency is back;
      !busy ||
      // serving much less than it can: a neighbour took the CPU (or a stall held every request at
      // once), and shedding would only serve less.
      perSecond < 0.7 * usual;
    if (rtt > slow && notOwnQueue) {
      this.congested = 0;
      next = L;
    } else if (rtt > target && rtt <= slow) {
      // The dead band: not fast enough to grow, not slow enough to shed. Holds, and does not
      // break a run of slow windows (a wandering p90 crossing the line every other window is
      // still one slow spell).
      next = L;
    } else if (rtt <= target) {
      this.congested = 0;
      // Uncongested: grow in proportion to the headroom left under the target (up to ×1.5 per
      // window far below it, +1 at least so a small limit moves; a fixed step overshoots and
      // saws around the target) — but only while the limit holds something back; otherwise it is
      // not what limits anything.
      next = this.refused > 0 ? Math.max(L + 1, L * (1 + this.smoothing * (Math.min(2, target / rtt) - 1))) : L;
    } else if (++this.congested < SLOW_WINDOWS) {
      // One slow window is a stall as often as a queue: a decrease needs SLOW_WINDOWS in a row.
      next = L;
    } else {
      // Congested: from what was actually in flight (an unused limit says nothing), in proportion
      // to how far the service time rose past the target (at most halved per window, smoothed).
      const inUse = Math.min(L, this.peak);
      next = inUse * (1 - this.smoothing * (1 - Math.max(0.5, slow / rtt)));
    }
    this.estimate = clamp(next, this.min, this.max);
    // Rounded, not floored: at a small limit the floor turned the smallest cut into a large one
    // (2 · 0.75 = 1.5 → 1, half the limit), which starved a handler whose knee is 2 (one request's
    // Redis call overlapping another's CPU) below it: 0.76× fixed's throughput in one run.
    this.limit = Math.max(1, Math.round(this.estimate));
    if (this.arriving > 0) this.arriving--;
    if (this.trace) this.writeTrace(now, rtt, perSecond, usual, target, L, loop);
    this.windowStart = now;
    this.count = 0;
    this.sumMs = 0;
    this.refused = 0;
    this.peak = this.inFlight;
  }

  /** One line per window: what it measured and what the limit did (HOT_ADMISSION_TRACE). */
  private writeTrace(now: number, rtt: number, perSecond: number, usual: number, target: number, L: number, loop: number): void {
    const r = (x: number) => Math.round(x * 100) / 100;
    const line = { t: r(now), p90: r(rtt), mean: r(this.lastRttMs), perSecond: Math.round(perSecond), usual: Math.round(usual), recent: Math.round(this.recentPerSecond), knee: r(this.kneeMs), target: r(target), loop: r(loop), peak: this.peak, refused: this.refused, slow: this.congested, from: r(L), limit: this.limit };
    try {
      appendFileSync(this.trace!, JSON.stringify(line) + '\n');
    } catch {
      this.trace = undefined; // a trace that cannot be written is not worth a failing request
    }
  }

  snapshot(): AdmissionSnapshot {
    // Refusing: the limit was in play, and what the window served is what the process serves at it.
    // Not refusing: at most twice the concurrency the window had, over its service time (Little's law).
    const usable = Math.min(this.limit, Math.max(2 * this.lastPeak, this.min));
    const rate = this.lastRttMs <= 0 ? 0 : this.lastRefused > 0 ? this.lastPerSecond : (usable * 1000) / this.lastRttMs;
    return {
      mode: this.adaptive ? 'adaptive' : 'fixed',
      limit: this.limit,
      max: this.max,
      min: this.min,
      inFlight: this.inFlight,
      rttMs: this.lastRttMs,
      kneeMs: this.kneeMs,
      admittedPerSecond: this.lastPerSecond,
      ratePerSecond: rate,
    };
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

let current: AdmissionLimit | undefined;

/** The web process's own limit (set by the web server at start): what /metrics and the waiting room read. */
export function setProcessAdmission(limit: AdmissionLimit | undefined): void {
  current = limit;
}

/** This process's admission now, or undefined when no hot server runs here. The waiting room admits at `ratePerSecond`. */
export function processAdmission(): AdmissionSnapshot | undefined {
  return current?.snapshot();
}
