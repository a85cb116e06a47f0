/**
 * A per-process memory that pub/sub keeps honest (the grab's refusal memory, the session cache):
 * key → value for a bounded time, at most `maxEntries` keys (on a full memory expired entries go
 * first, then everything). It answers nothing while it is not trusted — its subscriber is down, so
 * invalidations may be lost — and an answer fetched before an invalidation arrived is not stored:
 * take `mark()` before asking Redis and hand it to `set()` (an epoch check). The bounds are
 * lib/bounded-memory.ts's.
 */
import { BoundedMemory } from '@/lib/bounded-memory';

export class TrustedMemory<V> {
  private readonly entries: BoundedMemory<V>;
  private epoch = 0;
  private trusted = false;

  constructor(
    readonly boundMs: number,
    readonly maxEntries: number,
    now: () => number = Date.now,
  ) {
    this.entries = new BoundedMemory<V>(boundMs, maxEntries, now);
  }

  /** The live value of `key`, or null (unknown, expired, or the memory is not trusted now). */
  get(key: string): V | null {
    return this.trusted ? this.entries.get(key) : null;
  }

  mark(): number {
    return this.epoch;
  }

  /** Stores `value` until the bound (or `notAfter`, if sooner), unless an invalidation arrived since `mark`. */
  set(key: string, value: V, mark: number, notAfter = Infinity): void {
    if (!this.trusted || mark !== this.epoch) return;
    this.entries.set(key, value, notAfter);
  }

  /** An invalidation: forgets `key`, or every key whose value matches `which` when given a predicate. */
  forget(which: string | ((value: V) => boolean)): void {
    this.epoch++;
    if (typeof which === 'string') this.entries.delete(which);
    else this.entries.deleteWhere(which);
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
