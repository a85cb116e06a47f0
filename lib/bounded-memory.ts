/**
 * A per-process key → value memory with a time bound and a size bound: each entry lives at most
 * `boundMs` (or until its own `notAfter`, if sooner); at most `maxEntries` keys, and on a full
 * memory expired entries go first, then everything. Under the pub/sub-trusted memories
 * (lib/redis/trusted-memory.ts) and the decoded-cookie memory (lib/auth/resolve.ts).
 */
export class BoundedMemory<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    readonly boundMs: number,
    readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live value of `key`, or null (unknown or expired). */
  get(key: string): V | null {
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.until <= this.now()) {
      this.entries.delete(key);
      return null;
    }
    return e.value;
  }

  /** Stores `value` until the bound, or `notAfter` (ms since the epoch) if sooner; nothing if that is already past. */
  set(key: string, value: V, notAfter = Infinity): void {
    if (this.boundMs <= 0) return;
    const now = this.now();
    const until = Math.min(now + this.boundMs, notAfter);
    if (!(until > now)) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(key, { value, until });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Deletes every entry whose value matches. */
  deleteWhere(match: (value: V) => boolean): void {
    for (const [k, e] of this.entries) if (match(e.value)) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
