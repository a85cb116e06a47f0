/**
 * The single-Redis lock: a hash per lock (owner token, hold count, fence) driven by the
 * lua/lock-*.lua scripts, so take / renew / release are each one atomic step on the server.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import type { Grant, LockBackend } from '@/lib/lock/core';
import { ReleaseBus } from '@/lib/lock/release-bus';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

async function settledWithin(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export interface SingleNodeBackend extends LockBackend {
  /** Closes the shared release subscriber (the command client belongs to the caller). */
  close(): Promise<void>;
}

let ids = 0;

/** `client` must have the lua/ scripts defined (every client from createRedis has). */
export function singleNodeBackend(client: RedisClient): SingleNodeBackend {
  const bus = new ReleaseBus(client);

  /** One try; `sentAt` is when it left, as the lease it may grant is only known to run from then. */
  const take = async (name: string, token: string, leaseMs: number, mode: 'new' | 'reenter') => {
    const sentAt = Date.now();
    const r = await runScript<number>(client, 'lock-acquire', [keys.lock(name), keys.lockFence(name)], [token, leaseMs, mode]);
    return { r, validUntil: sentAt + leaseMs };
  };

  const grantOf = (name: string, token: string, leaseMs: number, fence: number, validUntil: number): Grant & { token: string } => ({
    token,
    fence,
    validUntil,
    renew: async () => {
      const sentAt = Date.now();
      const renewed = await runScript<number>(client, 'lock-extend', [keys.lock(name)], [token, leaseMs]);
      return renewed === 1 ? sentAt + leaseMs : null;
    },
    release: async () => {
      await runScript<number>(client, 'lock-release', [keys.lock(name), keys.lockReleased(name)], [token, leaseMs]);
    },
  });

  return {
    id: `single:${++ids}`,
    async acquire(name, leaseMs, waitMs) {
      const token = randomBytes(16).toString('hex');
      const first = await take(name, token, leaseMs, 'new');
      if (first.r > 0) return grantOf(name, token, leaseMs, first.r, first.validUntil);
      if (waitMs <= 0) return null;

      // Subscribe first, then look again: a release between the two cannot slip past unseen.
      const deadline = Date.now() + waitMs;
      const channel = keys.lockReleased(name);
      const waiter = bus.join(channel);
      let fence = 0;
      try {
        await settledWithin(waiter.ready, waitMs);
        for (;;) {
          const { r, validUntil } = await take(name, token, leaseMs, 'new');
          if (r > 0) {
            fence = r;
            return grantOf(name, token, leaseMs, r, validUntil);
          }
          const left = deadline - Date.now();
          if (left <= 0) return null;
          await waiter.sleep(Math.min(left, Math.max(1, -r)));
        }
      } finally {
        bus.leave(channel, waiter, fence > 0);
      }
    },
    async reenter(name, grant, leaseMs) {
      const { token } = grant as Grant & { token: string };
      const { r, validUntil } = await take(name, token, leaseMs, 'reenter');
      return r > 0 ? grantOf(name, token, leaseMs, r, validUntil).release : null;
    },
    close: () => bus.close(),
  };
}
