/**
 * The hot server's admission limit: how many complete, authenticated hot requests one process
 * serves at once (docs/hot-server.md#adaptive-admission). Fixed, it is HOT_MAX_IN_FLIGHT; adaptive,
 * it follows the measured service time of the admitted requests themselves, gradient-style (after
 * Netflix's concurrency-limits Gradient and Vegas limits): while the mean service time of a window
 * stays within `tolerance` of the fastest window seen (the box uncongested), the limit grows by
 * √limit (if it is used); once the mean rises above that, the limit shrinks in proportion —
 *
 *   gradient = tolerance · baseline / windowMean
 *   limit ← gradient ≥ 1 ? limit + √limit : limit · max(½, gradient) + 1     (the decrease smoothed)
 *
 * — bounded by [min, max]. Above the knee (service time ∝ concurrency) it settles where the
 * service time is about `tolerance` times the uncongested one. So the box admits about what it can serve while latency stays flat,
 * on a fast host or a slow one, without tuning; the rest is shed at once (503 + Retry-After).
 *
 * Cost per request: a compare and two additions on admission, a subtraction and two additions on
 * release; no allocation and no timer. The limit is recomputed inside release() once a window
 * (`windowMs`) has passed with at least `minSamples` samples: an idle process does nothing.
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
  /** Service time up to this multiple of the baseline counts as uncongested; default 1.5. */
  tolerance?: number;
  /** Share of a computed decrease applied per window; default 0.5. */
  smoothing?: number;
}

/** What the console and the future waiting room read (one process). */
export interface AdmissionSnapshot {
  mode: 'adaptive' | 'fixed';
  limit: number;
  max: number;
  min: number;
  inFlight: number;
  /** Mean service time of the admitted requests in the last window, ms (0 before the first). */
  rttMs: number;
  /** The fastest window seen (the box uncongested), ms (0 before the first). */
  baselineMs: number;
  /** Admitted requests completed per second in the last window. */
  admittedPerSecond: number;
  /** What the process can admit per second at the current limit: limit / service time (Little's law); 0 until measured. */
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
  private readonly smoothing: number;
  // The current window, in plain numbers.
  private windowStart = -1;
  private count = 0;
  private sumMs = 0;
  private peak = 0;
  // What the last windows measured.
  private baselineMs = Infinity;
  private lastRttMs = 0;
  private lastPerSecond = 0;

  constructor(o: AdmissionLimitOptions) {
    this.max = Math.max(1, o.max);
    this.adaptive = o.adaptive ?? false;
    this.min = Math.max(1, Math.min(o.min ?? 8, this.max));
    this.estimate = this.adaptive ? clamp(o.initial ?? 256, this.min, this.max) : this.max;
    this.limit = Math.floor(this.estimate);
    this.windowMs = o.windowMs ?? 100;
    this.minSamples = Math.max(1, o.minSamples ?? 16);
    this.tolerance = o.tolerance ?? 1.5;
    this.smoothing = o.smoothing ?? 0.5;
  }

  /** Takes a slot if one is free. */
  acquire(): boolean {
    if (this.inFlight >= this.limit) return false;
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
    if (this.windowStart < 0) this.windowStart = now;
    else if (now - this.windowStart >= this.windowMs && this.count >= this.minSamples) this.update(now);
  }

  private update(now: number): void {
    const rtt = this.sumMs / this.count;
    this.lastPerSecond = (this.count * 1000) / (now - this.windowStart);
    this.lastRttMs = rtt;
    if (rtt < this.baselineMs) this.baselineMs = rtt;
    const L = this.estimate;
    const gradient = (this.tolerance * this.baselineMs) / rtt;
    let next: number;
    if (gradient >= 1) {
      // Uncongested: probe upward by √limit (fast from a low start, gentle near a large limit) —
      // but only a limit that is used: a process at a tenth of its limit learns nothing about more.
      next = this.peak * 2 < L ? L : L + Math.sqrt(L);
    } else {
      // Congested: in proportion to how far the service time rose past the tolerance (at most
      // halved per window, smoothed), plus one so a small limit still moves.
      next = L + (L * Math.max(0.5, gradient) + 1 - L) * this.smoothing;
    }
    this.estimate = clamp(next, this.min, this.max);
    // At the floor and still slower than the baseline allows: this host (or what it waits on) got
    // slower for good, and what it serves at the floor is its uncongested time now.
    if (this.estimate <= this.min && rtt > this.tolerance * this.baselineMs) this.baselineMs = rtt;
    this.limit = Math.floor(this.estimate);
    this.windowStart = now;
    this.count = 0;
    this.sumMs = 0;
    this.peak = this.inFlight;
  }

  snapshot(): AdmissionSnapshot {
    return {
      mode: this.adaptive ? 'adaptive' : 'fixed',
      limit: this.limit,
      max: this.max,
      min: this.min,
      inFlight: this.inFlight,
      rttMs: this.lastRttMs,
      baselineMs: Number.isFinite(this.baselineMs) ? this.baselineMs : 0,
      admittedPerSecond: this.lastPerSecond,
      ratePerSecond: this.lastRttMs > 0 ? (this.limit * 1000) / this.lastRttMs : 0,
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
