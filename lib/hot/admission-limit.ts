/**
 * The hot server's admission limit: how many complete, authenticated hot requests one process
 * serves at once (docs/hot-server.md#adaptive-admission). Fixed, it is HOT_MAX_IN_FLIGHT; adaptive,
 * it follows the measured service time of the admitted requests themselves, gradient-style (after
 * Netflix's concurrency-limits Gradient2 and Vegas limits). Per window (≥ `windowMs`,
 * ≥ `minSamples` samples) it compares the window's p90 service time (`quantile`; the mean hid the
 * tail a client sees) with a target:
 *
 *   target    = max(tolerance · reference, floorMs)
 *   reference = the p90 of the load served in full: an average of the uncongested
 *               windows that refused nothing (down fast, up slowly over ~16 windows)
 *   rtt ≤ target:  limit ← max(limit + 1, limit · (1 + smoothing · (min(2, target / rtt) − 1)))
 *                  only if something was refused (more is offered than admitted)
 *   rtt > target:  limit ← inUse · (1 − smoothing · (1 − max(½, target / rtt)))
 *                  inUse = min(limit, the window's peak in flight); two such windows in a row
 *
 * These keep it from shedding a load the box serves well:
 *  - `floorMs`: a window whose p90 is under a couple of milliseconds is never congestion
 *    (nobody is hurt by 0.3 → 2 ms, and on a busy host such a window is mostly noise);
 *  - batching is not congestion: when the service time rose by r over the reference but the
 *    throughput rose by at least r too (several requests answered per turn — more in flight
 *    bought proportionally more work), the window becomes the reference;
 *  - a slower window while the throughput of the last windows is well above the usual (> 1.25×) is
 *    a load stepping up that the process is absorbing (connections opening, turns filling): below
 *    the knee by definition, so the limit holds until the usual rate has caught up;
 *  - a slower window is congestion only while the process serves about what it usually serves
 *    (≥ 70 % of a smoothed recent throughput): its own queue. Slower while serving much less is
 *    a neighbour taking the CPU (or a stall holding every request at once) — shedding would only
 *    serve less — so the limit holds; a decrease also needs two slow windows in a row;
 *  - a decrease starts from what was actually in flight, not from an unused limit, and the limit
 *    only grows while it refuses work, so an idle process keeps a large limit without acting on it.
 * Above the knee (service time ∝ concurrency, throughput flat) the limit settles where the
 * service time is about the target and the excess is shed at once (503 + Retry-After) — on a fast
 * or a slow host, without tuning. At the floor limit and still slower than the target, the host
 * (or what it waits on) got slower for good: that time becomes the reference.
 *
 * Cost per request: a compare and two additions on admission (one more on a refusal), a
 * subtraction and two additions on release; no allocation and no timer. The limit is recomputed
 * inside release() once a window has passed with enough samples: an idle process does nothing.
 */

export interface AdmissionLimitOptions {
  /** The hard ceiling (HOT_MAX_IN_FLIGHT). A fixed limit is this. */
  max: number;
  /** Adaptive: the limit follows the service time; otherwise it stays at `max`. */
  adaptive?: boolean;
  /** The floor the adaptive limit never goes below; default 8. */
  min?: number;
  /** Where the adaptive limit starts; default min(max, 256). */
  initial?: number;
  /** A window's length; default 100 ms. */
  windowMs?: number;
  /** Samples a window needs before it counts; default 16. */
  minSamples?: number;
  /** Service time up to this multiple of the reference counts as uncongested; default 1.25. */
  tolerance?: number;
  /** A window's service time (the statistic) under this is never congestion, ms; default 2. */
  floorMs?: number;
  /** Share of a computed decrease applied per window; default 0.5. */
  smoothing?: number;
  /**
   * The window statistic the limit controls: this quantile of the window's service times (default
   * 0.9, read from a fixed log-scale histogram, ±6 %), or the mean when 0.
   */
  quantile?: number;
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
  /** The reference the target follows: the p90 (the statistic) of the load served in full (ms, 0 before the first). */
  baselineMs: number;
  /** Admitted requests completed per second in the last window. */
  admittedPerSecond: number;
  /**
   * What the process can admit per second: when the limit refused work in the last window, what
   * that window served (the rate at the limit); otherwise at most twice the concurrency it actually
   * had over the service time (Little's law; an idle process's large limit is no promise); 0 until measured.
   */
  ratePerSecond: number;
}

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
  private readonly floorMs: number;
  private readonly smoothing: number;
  private readonly quantile: number;
  /** The current window's service times, by bucket (adaptive with a quantile only). */
  private readonly histogram: Uint32Array;
  // The current window, in plain numbers.
  private windowStart = -1;
  private count = 0;
  private sumMs = 0;
  private peak = 0;
  private refused = 0;
  // What the last windows measured.
  private baselineMs = Infinity;
  /** Throughput (per second) of the window that set the baseline. */
  private baselinePerSecond = 0;
  private usualPerSecond = 0;
  private recentPerSecond = 0;
  /** Congested windows in a row. */
  private congested = 0;
  private lastRttMs = 0;
  private lastPerSecond = 0;
  private lastPeak = 0;
  private lastRefused = 0;

  constructor(o: AdmissionLimitOptions) {
    this.max = Math.max(1, o.max);
    this.adaptive = o.adaptive ?? false;
    this.min = Math.max(1, Math.min(o.min ?? 8, this.max));
    this.estimate = this.adaptive ? clamp(o.initial ?? 256, this.min, this.max) : this.max;
    this.limit = Math.floor(this.estimate);
    this.windowMs = o.windowMs ?? 100;
    this.minSamples = Math.max(1, o.minSamples ?? 16);
    this.tolerance = o.tolerance ?? 1.25;
    this.floorMs = o.floorMs ?? 2;
    this.smoothing = o.smoothing ?? 0.5;
    this.quantile = o.quantile ?? 0.9;
    this.histogram = new Uint32Array(this.adaptive && this.quantile > 0 ? BUCKETS : 0);
  }

  /** Takes a slot if one is free. */
  acquire(): boolean {
    if (this.inFlight >= this.limit) {
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
    if (!this.adaptive || serviceMs < 0) return;
    this.count++;
    this.sumMs += serviceMs;
    if (this.quantile > 0) this.histogram[bucketOf(serviceMs)]!++;
    if (this.windowStart < 0) this.windowStart = now;
    else if (now - this.windowStart >= this.windowMs && this.count >= this.minSamples) this.update(now);
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
    if (!Number.isFinite(this.baselineMs)) {
      this.baselineMs = rtt;
      this.baselinePerSecond = perSecond;
    }
    const L = this.estimate;
    let target = Math.max(this.tolerance * this.baselineMs, this.floorMs);
    // Batching, not congestion: the time rose by r, but the work done per second rose by at least r
    // as well (the time per unit of work did not grow: Little's law, more in flight bought more
    // work). This is the box's efficient operating point now.
    if (rtt > target && perSecond * this.baselineMs >= this.baselinePerSecond * rtt) {
      this.baselineMs = rtt;
      this.baselinePerSecond = perSecond;
      target = Math.max(this.tolerance * rtt, this.floorMs);
    }
    // What this process has served per second lately (smoothed over ~8 windows): a window that
    // serves much less than that was held up by something else.
    const usual = this.usualPerSecond;
    this.usualPerSecond = usual === 0 ? perSecond : usual + (perSecond - usual) / 8;
    let next: number;
    // The last two or three windows' throughput (one window alone swings with how its end fell).
    const recent = this.recentPerSecond;
    this.recentPerSecond = recent === 0 ? perSecond : (recent + perSecond) / 2;
    if (rtt > target && usual > 0 && this.recentPerSecond > 1.25 * usual) {
      // Slower, but serving clearly more than it usually does: the offered load just stepped up and
      // the process is absorbing it (connections opening, turns filling). Below the knee by
      // definition — the knee is where more in flight stops buying more work. Hold until the usual
      // rate has caught up; if the time is still over the target then, that is congestion.
      this.congested = 0;
      next = L;
    } else if (rtt > target && perSecond < 0.7 * usual) {
      // Slower, but serving less than it can: not its own queue. A neighbour took the CPU (or a
      // stall held every request at once); shedding would only serve less. Hold, and start the
      // count of slow windows again: a neighbour's window between two slow ones breaks the run.
      this.congested = 0;
      next = L;
    } else if (rtt <= target) {
      this.congested = 0;
      // The reference follows the service time of the load served in full: quickly down, slowly
      // (~16 windows) up and only while nothing was refused — a shed load's time is not the reference.
      const a = rtt < this.baselineMs ? 0.25 : this.refused === 0 ? 1 / 16 : 0;
      this.baselineMs += (rtt - this.baselineMs) * a;
      this.baselinePerSecond += (perSecond - this.baselinePerSecond) * a;
      // Uncongested: grow in proportion to the headroom left under the target (up to ×1.5 per
      // window far below it, +1 at least so a small limit moves; a fixed step overshoots and
      // saws around the target) — but only while the limit holds something back; otherwise it is
      // not what limits anything.
      next = this.refused > 0 ? Math.max(L + 1, L * (1 + this.smoothing * (Math.min(2, target / rtt) - 1))) : L;
    } else if (++this.congested < 2) {
      // One slow window is a stall as often as a queue: a decrease needs two in a row.
      next = L;
    } else {
      // Congested: from what was actually in flight (an unused limit says nothing), in proportion
      // to how far the service time rose past the target (at most halved per window, smoothed).
      const inUse = Math.min(L, this.peak);
      next = inUse * (1 - this.smoothing * (1 - Math.max(0.5, target / rtt)));
    }
    this.estimate = clamp(next, this.min, this.max);
    // At the floor and still slower than the target: this host (or what it waits on) got slower
    // for good, and what it serves at the floor is its uncongested time now.
    if (this.estimate <= this.min && rtt > target) {
      this.baselineMs = rtt;
      this.baselinePerSecond = perSecond;
    }
    this.limit = Math.max(1, Math.floor(this.estimate));
    this.windowStart = now;
    this.count = 0;
    this.sumMs = 0;
    this.refused = 0;
    this.peak = this.inFlight;
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
      baselineMs: Number.isFinite(this.baselineMs) ? this.baselineMs : 0,
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
