/**
 * A per-process memory that pub/sub keeps honest (the grab's refusal memory, the session cache):
 * key → value for a bounded time, at most `maxEntries` keys (on a full memory expired entries go
 * first, then everything). It answers nothing while it is not trusted — its subscriber is down, so
 * invalidations may be lost — and an answer fetched before an invalidation arrived is not stored:
 * take `mark()` before asking Redis and hand it to `set()` (an epoch check).
 */
export class TrustedMemory<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private epoch = 0;
  private trusted = false;

  constructor(
    readonly boundMs: number,
    readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live value of `key`, or null (unknown, expired, or the memory is not trusted now). */
  get(key: string): V | null {
    if (!this.trusted) return null;
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.until <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return e.value;
  }

  mark(): number {
    return this.epoch;
  }

  /** Stores `value` until the bound (or `notAfter`, if sooner), unless an invalidation arrived since `mark`. */
  set(key: string, value: V, mark: number, notAfter = Infinity): void {
    if (!this.trusted || this.boundMs <= 0 || mark !== this.epoch) return;
    const now = this.now();
    const until = Math.min(now + this.boundMs, notAfter);
    if (!(until > now)) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(key, { value, until });
  }

  /** An invalidation: forgets `key`, or every key whose value matches `which` when given a predicate. */
  forget(which: string | ((value: V) => boolean)): void {
    this.epoch++;
    if (typeof which === 'string') this.entries.delete(which);
    else for (const [k, e] of this.entries) if (which(e.value)) this.entries.delete(k);
  }

  forgetAll(): void {
    this.epoch++;
    this.entries.clear();
  }

  /** The subscription came up (true) or went down (false); either way nothing learned before counts. */
  setTrusted(trusted: boolean): void {
    this.trusted = trusted;
    this.forgetAll();
  }

  get isTrusted(): boolean {
    return this.trusted;
  }

  get size(): number {
    return this.entries.size;
  }
}
