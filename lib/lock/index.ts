/**
 * Distributed locks for critical sections shared by every web and worker instance.
 *
 *   withLock(name, { leaseMs?, waitMs?, nodes? }, async (signal, fence) => …): Promise<T>
 *     Runs the section holding lock `name` (Redis key `lock:{name}`); throws LockTimeoutError if
 *     it is not granted within waitMs (default 0 = one try). leaseMs (default 10 s) is how long a
 *     grant survives its holder dying; while the section runs a watchdog renews it every leaseMs/3.
 *     `signal` aborts (reason: LockLostError) if the lease is lost anyway: check it before writing.
 *     `fence` strictly increases per lock name with every grant: pass it to fenced writes.
 *     The same async call chain may take the same lock again (re-entrant, counted in Redis); it
 *     is freed when the outermost section ends.
 *     nodes: unset = LOCK_BACKEND (redis → 'single', redlock → 'multi', zookeeper → 'zookeeper'):
 *     every product lock (cache rebuild, voucher console, GEO index) leaves it unset.
 *     nodes: 'single' = the main REDIS_URL; waiting is push-based (the release
 *     publishes, waiters subscribe) with no polling loop.
 *     nodes: 'multi' = Redlock over REDIS_URL plus the extra nodes in REDLOCK_NODES (comma-separated
 *     URLs, same db index; none = REDIS_URL alone), granted only by a majority of them; a busy
 *     multi-node lock is retried every ~100 ms (no release channel spans the nodes).
 *     nodes: 'zookeeper' = ephemeral sequential znodes on ZOOKEEPER_CONNECT, each waiter watching
 *     only its predecessor; no lease (leaseMs is ignored): a dead holder's session expiry
 *     (ZOOKEEPER_SESSION_TIMEOUT_MS) frees it, and losing the connection aborts `signal`. The
 *     fence is the zxid that created the znode (ordered with invalidateFenced's, see zookeeper.ts).
 *   tryWithLock(name, { leaseMs?, nodes? }, section) → { acquired: true, value } | { acquired: false }
 *     One try, no exception when busy.
 *
 * Fenced writes (refuse data from a holder that lost its lock):
 *   setIfFenceNewer(redis, key, value, fence, ttlMs?) → boolean
 *     Writes `key` only if no newer fence wrote or invalidated it (record at `<key>:fence`).
 *   invalidateFenced(redis, lockName, key, nodes?)
 *     After changing the source of truth: deletes `key` and refuses fenced writes from every grant
 *     of lock `lockName` (on the same backend) handed out before, e.g. a cache rebuild that read old rows.
 *   boundFenceCounter(redis, lockName, ttlMs, nodes?)
 *     Lets a lock's fence counter expire within ttlMs (lock names a stranger chooses).
 *   Cache rebuild:  withLock(`shop:${id}`, { waitMs: 200 }, async (signal, fence) => {
 *                     const row = await readShop(db, id);
 *                     if (!signal.aborted) await setIfFenceNewer(redis, keys.shop(id), JSON.stringify(row), fence, ttl);
 *                   })
 *   Shop update:    update the row, then invalidateFenced(redis, `shop:${id}`, keys.shop(id)).
 *
 * Processes that exit on their own call closeLocks() (the release subscriber keeps a connection).
 */
import { env, redlockNodes } from '@/lib/env';
import { boundSingleNodeFence, invalidateWithFence, singleNodeInvalidationFence } from '@/lib/lock/fence';
import { runLocked, tryRunLocked, type LockBackend, type LockOptions as BaseLockOptions, type Section } from '@/lib/lock/core';
import { multiNodeBackend, type MultiNodeBackend } from '@/lib/lock/multi';
import { singleNodeBackend, type SingleNodeBackend } from '@/lib/lock/single';
import { zookeeperBackend, type ZooKeeperBackend } from '@/lib/lock/zookeeper';
import { redis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';

export { LockTimeoutError, LockLostError, LockUnavailableError } from '@/lib/lock/core';
export { setIfFenceNewer } from '@/lib/lock/fence';

export type LockNodes = 'single' | 'multi' | 'zookeeper';

export interface LockOptions extends BaseLockOptions {
  /** Unset: LOCK_BACKEND. 'single': the main Redis. 'multi': a majority of REDIS_URL + REDLOCK_NODES. 'zookeeper': ZOOKEEPER_CONNECT. */
  nodes?: LockNodes;
}

/** Where locks go when the caller names no backend: LOCK_BACKEND (lib/env.ts checked it at start). */
export const configuredLockNodes: LockNodes = ({ redis: 'single', redlock: 'multi', zookeeper: 'zookeeper' } as const)[env.LOCK_BACKEND];

const g = globalThis as unknown as {
  __hmdpLocks?: { single?: SingleNodeBackend; multi?: MultiNodeBackend; zookeeper?: ZooKeeperBackend };
};
const backends = (g.__hmdpLocks ??= {});

const multi = () => (backends.multi ??= multiNodeBackend(redlockNodes(env)));
const zk = () => (backends.zookeeper ??= zookeeperBackend(env.ZOOKEEPER_CONNECT, env.ZOOKEEPER_SESSION_TIMEOUT_MS));

function backendFor(nodes: LockNodes = configuredLockNodes): LockBackend {
  if (nodes === 'multi') return multi();
  if (nodes === 'zookeeper') return zk();
  return (backends.single ??= singleNodeBackend(redis));
}

/**
 * Deletes `key` after its source of truth changed, and refuses from then on every fenced write
 * from a grant of lock `lockName` handed out before this call (a rebuild that read the old data).
 * The fence comes from the lock's own backend, so it is ordered with that backend's grants. If
 * the backend cannot give one (ZooKeeper or a Redlock majority unreachable), the key is still
 * deleted and the error thrown (CacheClient.invalidate keeps the key and tries again when its
 * Redis connection is ready again). Until it goes through, a rebuild that read before the
 * change and still holds its lock (another process that reaches the backend; on Redlock, until
 * its lease ends) can store what it read; a rebuild that lost the backend too lost its lock, its
 * signal aborted, and it stores nothing.
 */
export async function invalidateFenced(client: RedisClient, lockName: string, key: string, nodes: LockNodes = configuredLockNodes): Promise<void> {
  if (nodes === 'single') return invalidateWithFence(client, key, await singleNodeInvalidationFence(client, lockName));
  let fence: number;
  try {
    fence = nodes === 'multi' ? await multi().invalidationFence(lockName) : await zk().invalidationFence();
  } catch (err) {
    await client.del(key);
    throw err;
  }
  await invalidateWithFence(client, key, fence);
}

/**
 * Shortens a lock's fence counter to at most `ttlMs` (never lengthens it). For locks whose name a
 * stranger chooses (the rebuild lock of a random id): their counter must not outlive what they
 * guarded. ZooKeeper keeps no counter per lock (its fences are zxids; an empty lock directory is removed).
 */
export async function boundFenceCounter(client: RedisClient, lockName: string, ttlMs: number, nodes: LockNodes = configuredLockNodes): Promise<void> {
  if (nodes === 'single') return boundSingleNodeFence(client, lockName, ttlMs);
  if (nodes === 'multi') return multi().boundFence(lockName, ttlMs);
}

export function withLock<T>(name: string, opts: LockOptions, fn: Section<T>): Promise<T> {
  return runLocked(backendFor(opts.nodes), name, opts, fn);
}

export function tryWithLock<T>(
  name: string,
  opts: Omit<LockOptions, 'waitMs'>,
  fn: Section<T>,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  return tryRunLocked(backendFor(opts.nodes), name, { ...opts, waitMs: 0 }, fn);
}

/** Closes the lock's own connections (release subscriber, multi-node clients); not the main Redis. */
export async function closeLocks(): Promise<void> {
  const { single, multi, zookeeper } = backends;
  backends.single = undefined;
  backends.multi = undefined;
  backends.zookeeper = undefined;
  await Promise.all([single?.close(), multi?.close(), zookeeper?.close()]);
}
