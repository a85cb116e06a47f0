/**
 * What a cache key holds (docs/security.md#redis-keys): `""` marks "not in the DB"; anything else is an envelope
 * `{"e":expiresAt,"s":shape,"d":data}`. `e` is 0 for ordinary entries (Redis TTL decides) and a unix-ms
 * logical expiry for hot entries, which Redis keeps much longer. `s` is the shape of `d` when the
 * spec names one (docs/shop-cache.md#shape-version): an entry written before the shape changed (a
 * new field) reads as a miss and is rebuilt, never served without the field. (The fence of the rebuild that
 * wrote it lives beside it, in lib/lock's fence record `<key>:fence`.)
 */

export const NULL_MARKER = '';

export type Entry<T> =
  | { kind: 'miss' }
  | { kind: 'null' }
  | { kind: 'value'; value: T; expiresAt: number };

export function encodeEntry(value: unknown, expiresAt: number, shape?: string): string {
  return shape === undefined ? `{"e":${expiresAt},"d":${JSON.stringify(value)}}` : `{"e":${expiresAt},"s":${JSON.stringify(shape)},"d":${JSON.stringify(value)}}`;
}

/** `shape`: what the reader expects; an entry of another shape (or none) is a miss. */
export function decodeEntry<T>(raw: string | null, shape?: string): Entry<T> {
  if (raw === null) return { kind: 'miss' };
  if (raw === NULL_MARKER) return { kind: 'null' };
  try {
    const env = JSON.parse(raw) as { e: number; s?: string; d: T };
    if (env.s !== shape) return { kind: 'miss' };
    return { kind: 'value', value: env.d, expiresAt: env.e };
  } catch {
    // Unreadable (an old format or a hand edit): treat as absent so it gets rebuilt.
    return { kind: 'miss' };
  }
}

/** True when a logically expiring entry is past its time (ordinary entries never are). */
export function isStale(entry: { expiresAt: number }, now = Date.now()): boolean {
  return entry.expiresAt > 0 && entry.expiresAt <= now;
}

/**
 * Seconds → ms with up to `jitter` (0..1) random extra, so keys written in one burst (a warm-up,
 * a cold start) do not all expire in the same second (cache avalanche).
 */
export function jitteredMs(seconds: number, jitter: number): number {
  return Math.round(seconds * 1000 * (1 + Math.random() * jitter));
}

/**
 * A shape version from the field names a cached value carries (order does not matter) and a
 * revision to raise when a field keeps its name but changes meaning. Adding, removing or renaming
 * a field changes it by itself.
 */
export function shapeOf(fields: readonly string[], revision = 1): string {
  let h = 0x811c9dc5;
  for (const c of `${revision}:${[...fields].sort().join(',')}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h.toString(36);
}
