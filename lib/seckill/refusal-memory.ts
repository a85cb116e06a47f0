/**
 * Refusals cost nothing (docs/hot-server.md#refusal-memory). In a real sale almost every grab is refused, and
 * most refusals are "sold out" (or "not started" / "ended"): facts about the voucher, not the user.
 * Each process remembers them for a short, bounded time and answers the next grabs of that voucher
 * without Redis.
 *
 * Bounds:
 * - time: an entry lives at most SECKILL_REFUSAL_MEMORY_MS (0 = the memory is off), and a "not
 *   started" never past the sale's begin time (the grab script returns it);
 * - size: at most SECKILL_REFUSAL_MEMORY_MAX vouchers; on a full memory expired entries go first,
 *   then everything. A voucher only enters after the route validated its id AND the grab script
 *   answered for it with one of the three codes (an unknown voucher is never remembered), so junk
 *   ids cannot grow it.
 *
 * Invalidation: whatever can turn a refusal into a sale — an add-stock, a preheat (which every
 * window edit and take-down goes through), a returned unit (cancel, refund), a released order —
 * publishes the voucher id on `seckill:changed` (notifySeckillChanged); every process subscribes on
 * a dedicated connection and forgets that voucher at once.
 *
 * Trust: a message published while the subscriber connection is down is lost, so the memory is
 * only used while the subscription is live. When the connection closes (or, on a Cluster, a node
 * leaves) the memory is emptied and not consulted again until SUBSCRIBE has been confirmed anew.
 * On a Cluster the subscription lives on one node chosen by ioredis; if that node changes without
 * the Cluster client reporting it, the time bound is the guarantee left.
 *
 * Races: a script reply and an invalidation travel on two connections. Every invalidation bumps an
 * epoch; a refusal is recorded only if no invalidation arrived since its script call was sent, so
 * an add-stock that Redis ran after the script can never be overwritten by that script's "sold out".
 *
 * Not remembered: ALREADY_BOUGHT and FORFEITED (about one user: they keep coming from the one
 * script call every grab makes) and RATE_LIMITED. A user who already bought and grabs again while the voucher is
 * remembered sold out hears "sold out" (410) instead of "already bought" (409): both are refusals
 * and both are true; the memory answers for the voucher, not the user.
 */
import { Counter, register } from 'prom-client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { subscribeTrusted } from '@/lib/redis/subscriber';
import { TrustedMemory } from '@/lib/redis/trusted-memory';
import { onRedisClose } from '@/lib/redis/close-hooks';

export type RememberedCode = 'SOLD_OUT' | 'NOT_STARTED' | 'ENDED';

/** Voucher id → the refusal the grab script last gave for it (lib/redis/trusted-memory.ts keeps it honest). */
export class RefusalMemory extends TrustedMemory<RememberedCode> {
  /** The remembered refusal of this voucher, or null (unknown, expired, or the memory is not trusted now). */
  lookup(voucherId: string): RememberedCode | null {
    return this.get(voucherId);
  }

  /** Remembers a refusal the script just gave, unless an invalidation arrived since `mark`. `notAfter`: ms (begin time for NOT_STARTED). */
  record(voucherId: string, code: RememberedCode, mark: number, notAfter = Infinity): void {
    this.set(voucherId, code, mark, notAfter);
  }
}

export interface RefusalMemoryHandle {
  memory: RefusalMemory;
  subscriber: RedisClient;
  close(): Promise<void>;
}

const handles = new WeakMap<RedisClient, RefusalMemoryHandle>();

/**
 * This process's refusal memory for the Redis `client` (its subscriber is a duplicate of it, made on
 * first use), or null when SECKILL_REFUSAL_MEMORY_MS is 0. Until the subscription is confirmed the
 * memory answers nothing.
 */
export function refusalMemoryOf(client: RedisClient): RefusalMemory | null {
  if (env.SECKILL_REFUSAL_MEMORY_MS <= 0) return null;
  return openRefusalMemory(client).memory;
}

export function openRefusalMemory(client: RedisClient, boundMs = env.SECKILL_REFUSAL_MEMORY_MS, maxEntries = env.SECKILL_REFUSAL_MEMORY_MAX): RefusalMemoryHandle {
  const existing = handles.get(client);
  if (existing) return existing;
  const memory = new RefusalMemory(boundMs, maxEntries);
  const sub = subscribeTrusted(
    client,
    'refusal memory',
    keys.seckillChanged(),
    (voucherId) => memory.forget(voucherId),
    (trusted) => memory.setTrusted(trusted),
  );
  const handle: RefusalMemoryHandle = {
    memory,
    subscriber: sub.subscriber,
    async close() {
      handles.delete(client);
      await sub.close();
    },
  };
  handles.set(client, handle);
  return handle;
}

/** Closes the refusal memory's subscriber of `client` (processes and tests that exit on their own). */
export async function closeRefusalMemory(client: RedisClient): Promise<void> {
  await handles.get(client)?.close();
}
onRedisClose(closeRefusalMemory);

/**
 * Tells every process that this voucher may sell again (stock added or returned, window or status
 * changed). Never throws: the caller's change is already made, and each memory expires on its own
 * within SECKILL_REFUSAL_MEMORY_MS anyway.
 */
export async function notifySeckillChanged(client: RedisClient, voucherId: string): Promise<void> {
  handles.get(client)?.memory.forget(voucherId); // this process at once, the others by pub/sub
  try {
    await client.publish(keys.seckillChanged(), voucherId);
  } catch (err) {
    log.warn({ err: (err as Error).message, voucherId }, 'seckill change notification failed; refusal memories expire on their own');
  }
}

const fromMemoryName = 'hmdp_hot_refusals_from_memory_total';
/**
 * The counts behind the counter, in plain numbers: prom-client's inc() validates and hashes its
 * labels on every call, on the hottest path there is. One object per process (this module may be
 * loaded twice in a web process: by the hot server and by Next's bundle), copied into the counter
 * whenever it is read.
 */
const fromMemoryCounts: Record<RememberedCode, number> = ((globalThis as { __hmdpRefusalsFromMemory?: Record<RememberedCode, number> }).__hmdpRefusalsFromMemory ??= {
  SOLD_OUT: 0,
  NOT_STARTED: 0,
  ENDED: 0,
});

/** One grab refusal answered from the memory. */
export function countRefusalFromMemory(code: RememberedCode): void {
  fromMemoryCounts[code]++;
}

/** Grab refusals answered from this memory, without Redis (summed over the web processes with the other hot metrics). */
export const refusalsFromMemory: Counter<'outcome'> =
  (register.getSingleMetric(fromMemoryName) as Counter<'outcome'> | undefined) ??
  new Counter({
    name: fromMemoryName,
    help: 'Grab refusals answered from the per-process refusal memory (no Redis), by outcome',
    labelNames: ['outcome'] as const,
    registers: [register],
    collect() {
      this.reset();
      for (const [code, n] of Object.entries(fromMemoryCounts)) if (n > 0) this.inc({ outcome: code.toLowerCase() }, n);
    },
  });
