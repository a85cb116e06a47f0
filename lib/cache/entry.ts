/**
 * What a cache key holds (docs/security.md#redis-keys): `""` marks "not in the DB"; anything else is an envelope
 * `{"e":expiresAt,"d":data}`. `e` is 0 for ordinary entries (Redis TTL decides) and a unix-ms
 * logical expiry for hot entries, which Redis keeps much longer. (The fence of the rebuild that
 * wrote it lives beside it, in lib/lock's fence record `<key>:fence`.)
 */

export const NULL_MARKER = '';

export type Entry<T> =
  | { kind: 'miss' }
  | { kind: 'null' }
  | { kind: 'value'; value: T; expiresAt: number };

export function encodeEntry(value: unknown, expiresAt: number): string {
  return `{"e":${expiresAt},"d":${JSON.stringify(value)}}`;
}

export function decodeEntry<T>(raw: string | null): Entry<T> {
  if (raw === null) return { kind: 'miss' };
  if (raw === NULL_MARKER) return { kind: 'null' };
  try {
    const env = JSON.parse(raw) as { e: number; d: T };
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
