/**
 * Fenced writes: a value guarded by a lock carries the fence of the grant that wrote it, and a
 * write with an older fence is refused, so a holder that silently lost its lock (a long GC pause,
 * a slow rebuild) cannot put stale data back. See the API notes in lib/lock/index.ts.
 */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

/** Fence records outlive the values they guard (a stale holder may wake up long after). */
const FENCE_RECORD_MIN_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Sets `key` to `value` unless a newer fence already wrote or invalidated it; true when written.
 * `recordTtlMs` shortens the fence record's life for values anyone can cause (a "not in the DB"
 * marker for a random id): such a record lives as long as the value, never a day.
 */
export async function setIfFenceNewer(client: RedisClient, key: string, value: string, fence: number, ttlMs = 0, recordTtlMs?: number): Promise<boolean> {
  const recordTtl = recordTtlMs ?? Math.max(ttlMs, FENCE_RECORD_MIN_TTL_MS);
  const r = await runScript<number>(client, 'lock-fenced-set', [key, keys.fenceRecord(key)], [value, fence, ttlMs, recordTtl]);
  return r === 1;
}

/**
 * Deletes `key` and raises its fence record to `fence`, a token the lock's backend handed out
 * after the source of truth changed (lib/lock/index.ts invalidateFenced picks the backend).
 */
export async function invalidateWithFence(client: RedisClient, key: string, fence: number): Promise<void> {
  await runScript(client, 'lock-fenced-del', [key, keys.fenceRecord(key)], [fence, FENCE_RECORD_MIN_TTL_MS]);
}

/**
 * The single-node lock's invalidation fence: the next value of its counter (every later grant gets
 * a greater one), taken as a grant takes it, so a counter that expired restarts above the old tokens.
 */
export function singleNodeInvalidationFence(client: RedisClient, lockName: string): Promise<number> {
  return runScript<number>(client, 'lock-fence-next', [keys.lockFence(lockName)], []);
}

/**
 * Shortens a single-node lock's fence counter to at most `ttlMs` (never lengthens it). For locks
 * whose name a stranger chooses (the rebuild lock of a random id): their counter must not outlive
 * what they guarded. Safe because a counter created later starts at Redis' clock in ms, above any old token.
 */
export async function boundSingleNodeFence(client: RedisClient, lockName: string, ttlMs: number): Promise<void> {
  await client.pexpire(keys.lockFence(lockName), ttlMs, 'LT');
}
