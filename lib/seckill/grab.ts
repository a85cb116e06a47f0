/**
 * The grab path (README: Flash sale): a candidate order id from this process's pool (no round trip) →
 * one Lua script checks the rate limits, decides and records the order in the voucher's outbox →
 * the order message is published to RabbitMQ with the other orders of this event-loop turn, and
 * the grab answers 200 `pending` once the broker has confirmed it. A refused grab gives its id back.
 *
 * Why wait for the confirm: Redis may forget an accepted grab (a Cluster failover, a restart without
 * fsync) and its outbox entry with it; a persistent message in a durable queue is not forgotten.
 * So a 200 means the order is in RabbitMQ, and the worker will write it or report it failed. If
 * the confirm does not come (broker down, channel closed, PUBLISH_CONFIRM_TIMEOUT_MS), the unit is
 * given back in one script (outbox entry, buyer, stock) and the grab answers 503 with Retry-After.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { OrderIdPool } from '@/lib/id/pool';
import { parseOrderMessage } from '@/lib/order/message';
import { log } from '@/lib/log';
import { publishSoon } from '@/lib/order/publish-batch';
import { consume, limitMessages } from '@/lib/rate-limit';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { grabVoucherInDb } from '@/lib/seckill/grab-db';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { findSeckillVoucher } from '@/lib/seckill/seckill.repository';
import { waitForReplica } from '@/lib/seckill/replica-wait';
import { releaseOrder } from '@/lib/seckill/outbox';

export interface GrabInput {
  voucherId: string;
  userId: string;
  ip: string;
}

export interface GrabResult {
  orderId: string;
  /** `pending` until the worker has written the order; the `db` benchmark strategy answers `created`. */
  status: 'pending' | 'created';
}

export const GrabCode = { ACCEPTED: 0, UNKNOWN: 1, NOT_STARTED: 2, ENDED: 3, ALREADY_BOUGHT: 4, SOLD_OUT: 5, RATE_LIMITED: 6 } as const;

const refusals: Record<number, () => AppError> = {
  [GrabCode.UNKNOWN]: () => notFound('秒杀券'),
  [GrabCode.NOT_STARTED]: () => new AppError('NOT_STARTED', '秒杀尚未开始'),
  [GrabCode.ENDED]: () => new AppError('ENDED', '秒杀已经结束'),
  [GrabCode.ALREADY_BOUGHT]: () => new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了'),
  [GrabCode.SOLD_OUT]: () => new AppError('SOLD_OUT', '已售罄'),
};

const g = globalThis as unknown as { __hmdpOrderIds?: OrderIdPool };

export async function grabVoucher(db: DB, redis: RedisClient, input: GrabInput): Promise<GrabResult> {
  if (env.SECKILL_STRATEGY === 'db') {
    await Promise.all([consume('seckillUser', input.userId), consume('seckillIp', input.ip)]);
    return grabVoucherInDb(db, redis, input);
  }
  const ids = (g.__hmdpOrderIds ??= new OrderIdPool(redis));
  const { id: orderId, giveBack } = await ids.take();
  const limits = env.RATE_LIMITS ? { user: env.SECKILL_USER_PER_SECOND, ip: env.SECKILL_IP_PER_SECOND } : undefined;
  const first = await runGrabScript(redis, { ...input, orderId, limits });
  let [code, payload] = first;
  // Not in Redis: a voucher created without a preheat, or Redis lost its keys. Rebuild and retry
  // once (the limits were counted by the first call).
  if (code === GrabCode.UNKNOWN && (await preheatIfOnSale(db, redis, input.voucherId))) {
    [code, payload] = await runGrabScript(redis, { ...input, orderId });
  }
  if (code !== GrabCode.ACCEPTED || !payload) {
    giveBack();
    if (code === GrabCode.RATE_LIMITED) throw rateLimited(first[2], Number(payload));
    throw (refusals[code] ?? refusals[GrabCode.UNKNOWN]!)();
  }

  // Opt-in: trade latency for grabs a failover cannot forget (measured in the README).
  if (env.SECKILL_REPLICA_WAIT_MS > 0) await waitForReplica(redis, input.voucherId, env.SECKILL_REPLICA_WAIT_MS);
  const parsed = parseOrderMessage(payload);
  if (!parsed.ok) throw new Error(`grab script wrote a bad outbox entry: ${parsed.reason}`);
  // Published with the rest of this turn's orders (lib/order/publish-batch.ts); 200 only once confirmed.
  try {
    await publishSoon(parsed.msg);
  } catch (err) {
    return unpublished(redis, parsed.msg.voucherId, orderId, input.userId, err);
  }
  return { orderId, status: 'pending' };
}

/** Retry-After (seconds) of a grab whose order could not be handed to the broker. */
const UNPUBLISHED_RETRY_AFTER_S = 1;

/**
 * The broker did not confirm this order: take the grab back (outbox entry, buyer and unit in one
 * script, only if the entry is still there) and answer 503, so the buyer retries. Two cases keep
 * the 200 instead:
 *   - the release itself fails (Redis unreachable): the script ran all or nothing, so the entry is
 *     still in the outbox and the sweeper publishes it (OUTBOX_STALE_MS later; it already knows the
 *     voucher: every preheat puts it in seckill:active, and a grab is only accepted on preheated
 *     keys) — the order is as safe as Redis is, and a 503 would be a lie that leaves a real order behind;
 *   - the release finds no entry: the worker already wrote the order and cleared it (the message
 *     reached the broker after all and only the confirm was late or lost), or the sweeper did.
 * A message that reached the broker whose confirm never came AND whose unit was given back is
 * written by the worker anyway; the buyer then holds that order (a later grab of theirs folds
 * into it, see lib/order/persist.ts), and MySQL's stock guard still prevents overselling.
 */
async function unpublished(redis: RedisClient, voucherId: string, orderId: string, userId: string, cause: unknown): Promise<GrabResult> {
  const why = cause instanceof Error ? cause.message : String(cause);
  let released: boolean;
  try {
    released = await releaseOrder(redis, voucherId, orderId, userId);
  } catch (err) {
    log.warn({ orderId, voucherId, why, err: err instanceof Error ? err.message : String(err) }, 'unconfirmed order could not be released; it stays in the outbox for the sweeper');
    return { orderId, status: 'pending' };
  }
  if (!released) return { orderId, status: 'pending' };
  throw new AppError('SERVICE_UNAVAILABLE', '下单通道繁忙，名额已退回，请稍后重试', { retryAfter: UNPUBLISHED_RETRY_AFTER_S });
}

function rateLimited(who: string | undefined, waitMs: number): AppError {
  const message = who === 'ip' ? limitMessages.seckillIp : limitMessages.seckillUser;
  return new AppError('RATE_LIMITED', message, { retryAfter: waitMs / 1000 });
}

/** The grab script (also used by tests and the drain bench to record an order as a grab would). */
export function runGrabScript(
  redis: RedisClient,
  o: { voucherId: string; userId: string; orderId: string; ip?: string; limits?: { user: number; ip: number } },
): Promise<[number, string?, string?]> {
  const v = o.voucherId;
  return runScript<[number, string?, string?]>(
    redis,
    'seckill-grab',
    [keys.seckillMeta(v), keys.seckillStock(v), keys.seckillBuyers(v), keys.seckillPending(v), keys.seckillRateUser(v, o.userId), keys.seckillRateIp(v, o.ip ?? '-')],
    [v, o.userId, o.orderId, o.limits?.user ?? 0, o.limits?.ip ?? 0],
  );
}

// Grabs racing on a cold voucher share one rebuild per process (a rebuild reads every buyer).
const preheating = new Map<string, Promise<boolean>>();

function preheatIfOnSale(db: DB, redis: RedisClient, voucherId: string): Promise<boolean> {
  let p = preheating.get(voucherId);
  if (!p) {
    p = (async () => {
      const v = await findSeckillVoucher(db, voucherId);
      if (!v || v.type !== VoucherType.SECKILL || v.status !== VoucherStatus.ON_SALE) return false;
      await preheatVoucher(db, redis, voucherId);
      return true;
    })().finally(() => preheating.delete(voucherId));
    preheating.set(voucherId, p);
  }
  return p;
}
