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
 *     nodes: 'single' (default) = the main REDIS_URL; waiting is push-based (the release
 *     publishes, waiters subscribe) with no polling loop.
 *     nodes: 'multi' = Redlock over REDIS_URL plus the extra nodes in REDLOCK_NODES (comma-separated
 *     URLs, same db index; none = REDIS_URL alone), granted only by a majority of them; a busy
 *     multi-node lock is retried every ~100 ms (no release channel spans the nodes).
 *     nodes: 'zookeeper' = ephemeral sequential znodes on ZOOKEEPER_CONNECT, each waiter watching
 *     only its predecessor; no lease (leaseMs is ignored): a dead holder's session expiry
 *     (ZOOKEEPER_SESSION_TIMEOUT_MS) frees it, and losing the connection aborts `signal`. The
 *     fence is the znode's sequence (invalidateFenced pairs with single-node locks only).
 *   tryWithLock(name, { leaseMs?, nodes? }, section) → { acquired: true, value } | { acquired: false }
 *     One try, no exception when busy.
 *
 * Fenced writes (refuse data from a holder that lost its lock):
 *   setIfFenceNewer(redis, key, value, fence, ttlMs?) → boolean
 *     Writes `key` only if no newer fence wrote or invalidated it (record at `<key>:fence`).
 *   invalidateFenced(redis, lockName, key)
 *     After changing the source of truth: deletes `key` and refuses fenced writes from every grant
 *     of single-node lock `lockName` handed out before, e.g. a cache rebuild that read old rows.
 *   Cache rebuild:  withLock(`shop:${id}`, { waitMs: 200 }, async (signal, fence) => {
 *                     const row = await readShop(db, id);
 *                     if (!signal.aborted) await setIfFenceNewer(redis, keys.shop(id), JSON.stringify(row), fence, ttl);
 *                   })
 *   Shop update:    update the row, then invalidateFenced(redis, `shop:${id}`, keys.shop(id)).
 *
 * Processes that exit on their own call closeLocks() (the release subscriber keeps a connection).
 */
import { env } from '@/lib/env';
import { runLocked, tryRunLocked, type LockBackend, type LockOptions as BaseLockOptions, type Section } from '@/lib/lock/core';
import { multiNodeBackend, type MultiNodeBackend } from '@/lib/lock/multi';
import { singleNodeBackend, type SingleNodeBackend } from '@/lib/lock/single';
import { zookeeperBackend, type ZooKeeperBackend } from '@/lib/lock/zookeeper';
import { redis } from '@/lib/redis/client';

export { LockTimeoutError, LockLostError } from '@/lib/lock/core';
export { setIfFenceNewer, invalidateFenced, boundFenceCounter } from '@/lib/lock/fence';

export interface LockOptions extends BaseLockOptions {
  /** 'single' (default): the main Redis. 'multi': a majority of REDIS_URL + REDLOCK_NODES. 'zookeeper': ZOOKEEPER_CONNECT. */
  nodes?: 'single' | 'multi' | 'zookeeper';
}

const g = globalThis as unknown as {
  __hmdpLocks?: { single?: SingleNodeBackend; multi?: MultiNodeBackend; zookeeper?: ZooKeeperBackend };
};
const backends = (g.__hmdpLocks ??= {});

function backendFor(opts: LockOptions): LockBackend {
  if (opts.nodes === 'multi') {
    return (backends.multi ??= multiNodeBackend([...new Set([env.REDIS_URL, ...env.REDLOCK_NODES])]));
  }
  if (opts.nodes === 'zookeeper') {
    return (backends.zookeeper ??= zookeeperBackend(env.ZOOKEEPER_CONNECT, env.ZOOKEEPER_SESSION_TIMEOUT_MS));
  }
  return (backends.single ??= singleNodeBackend(redis));
}

export function withLock<T>(name: string, opts: LockOptions, fn: Section<T>): Promise<T> {
  return runLocked(backendFor(opts), name, opts, fn);
}

export function tryWithLock<T>(
  name: string,
  opts: Omit<LockOptions, 'waitMs'>,
  fn: Section<T>,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  return tryRunLocked(backendFor(opts), name, { ...opts, waitMs: 0 }, fn);
}

/** Closes the lock's own connections (release subscriber, multi-node clients); not the main Redis. */
export async function closeLocks(): Promise<void> {
  const { single, multi, zookeeper } = backends;
  backends.single = undefined;
  backends.multi = undefined;
  backends.zookeeper = undefined;
  await Promise.all([single?.close(), multi?.close(), zookeeper?.close()]);
}
