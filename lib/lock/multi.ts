/**
 * The multi-node lock (Redisson's MultiLock in the original 黑马点评, done as Redlock): the same lock is taken on N
 * independent Redis nodes and counts as granted only when a majority said yes within the lease,
 * so losing a minority of nodes neither blocks the product nor lets two holders in.
 * Taking / renewing / releasing is @sesamecare-oss/redlock; fences and re-entry are ours.
 */
import { ExecutionError, Redlock, type Lock } from '@sesamecare-oss/redlock';
import type { RedisClient } from '@/lib/redis/types';
import type { Grant, LockBackend } from '@/lib/lock/core';
import { log } from '@/lib/log';
import { createRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

/** Between two tries for a busy multi-node lock (Redlock retries; there is no cross-node release channel). */
const RETRY_DELAY_MS = 100;

export interface MultiNodeBackend extends LockBackend {
  /** A fence above every grant of `name` handed out before and below every later one (majority read, max + 1, majority raise). */
  invalidationFence(name: string): Promise<number>;
  /** Shortens `name`'s fence counter on every node that answers to at most `ttlMs` (never lengthens it). */
  boundFence(name: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A client per node that fails fast while its node is down (no offline queue, short timeouts),
 * so a dead node costs one vote at once instead of stalling every attempt.
 */
export function connectLockNode(url: string): RedisClient {
  return createRedis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500, connectTimeout: 1000 });
}

/** Without an offline queue the first command must wait for the connection (or give up on it). */
function connected(node: RedisClient, ms: number): Promise<void> {
  if (node.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      node.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    node.once('ready', done);
  });
}

function dbOf(url: string): number {
  return Number(new URL(url).pathname.slice(1) || 0);
}

/** Resolves with the first `need` results, or rejects once that many can no longer succeed. */
function quorum<T>(calls: Promise<T>[], need: number): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const ok: T[] = [];
    let failed = 0;
    for (const call of calls) {
      call.then(
        (v) => {
          ok.push(v);
          if (ok.length === need) resolve(ok);
        },
        () => {
          failed += 1;
          if (calls.length - failed < need) reject(new Error(`only ${calls.length - failed} of ${calls.length} lock nodes answered`));
        },
      );
    }
  });
}

let ids = 0;

export function multiNodeBackend(urls: string[]): MultiNodeBackend {
  if (urls.length === 0) throw new Error('a multi-node lock needs at least one node');
  const db = dbOf(urls[0]!);
  const odd = urls.find((u) => dbOf(u) !== db);
  if (odd !== undefined) throw new Error(`every lock node must use the db index of the first (${db}); ${new URL(odd).host} uses ${dbOf(odd)}`);
  const nodes = urls.map(connectLockNode);
  const need = Math.floor(nodes.length / 2) + 1;
  const firstConnect = Promise.all(nodes.map((n) => connected(n, 1000)));
  // Redlock SELECTs this db inside its scripts, so it must match the URLs.
  const redlock = new Redlock(nodes, { retryCount: 0, retryDelay: RETRY_DELAY_MS, retryJitter: RETRY_DELAY_MS / 2, db });

  /** Majority read, max + 1, majority raise: any later grant's majority sees this fence. */
  async function nextFence(name: string): Promise<number> {
    const seen = await quorum(nodes.map((n) => n.get(keys.lockFence(name))), need);
    // Counters expire a day after their last use; where one is missing, start from the clock in ms,
    // far above anything an expired counter reached, so tokens keep growing (see lock-acquire).
    const next = Math.max(...seen.map((v) => Number(v ?? 0))) + 1;
    const fence = seen.some((v) => v == null) ? Math.max(next, Date.now()) : next;
    await quorum(nodes.map((n) => runScript<number>(n, 'lock-fence-raise', [keys.lockFence(name)], [fence])), need);
    return fence;
  }

  const isRefusal = (err: unknown) => err instanceof ExecutionError;

  return {
    id: `multi:${++ids}`,
    async acquire(name, leaseMs, waitMs) {
      await firstConnect;
      const retryCount = waitMs > 0 ? Math.ceil(waitMs / RETRY_DELAY_MS) : 0;
      let lock: Lock;
      try {
        lock = await redlock.acquire([keys.lockMulti(name)], leaseMs, { retryCount });
      } catch (err) {
        if (isRefusal(err)) return null;
        throw err;
      }
      const release = () => redlock.release(lock, { retryCount: 0 }).then(() => undefined);
      let fence: number;
      try {
        fence = await nextFence(name);
      } catch (err) {
        log.warn({ lock: name, err: (err as Error).message }, 'multi-node lock granted but no majority for its fence');
        await release().catch(() => undefined);
        return null;
      }
      if (Date.now() >= lock.expiration) {
        await release().catch(() => undefined);
        return null; // the votes and the fence took the whole lease: nothing left to run in
      }
      // Redlock's expiration counts from when the winning try was sent, minus clock drift.
      const grant: Grant = {
        fence,
        validUntil: lock.expiration,
        async renew() {
          try {
            lock = await redlock.extend(lock, leaseMs, { retryCount: 0 });
            return lock.expiration;
          } catch (err) {
            if (isRefusal(err)) return null;
            throw err;
          }
        },
        release,
      };
      return grant;
    },
    // The grant spans the whole outer section, so an inner hold in the same call chain needs no round trip.
    reenter: async () => async () => undefined,
    async invalidationFence(name) {
      await firstConnect;
      return nextFence(name);
    },
    async boundFence(name, ttlMs) {
      await firstConnect;
      await Promise.allSettled(nodes.map((n) => n.pexpire(keys.lockFence(name), ttlMs, 'LT')));
    },
    async close() {
      await Promise.all(nodes.map((n) => n.quit().catch(() => n.disconnect())));
    },
  };
}
