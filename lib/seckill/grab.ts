/**
 * The grab path (README: Flash sale): a candidate order id from this process's pool (no round trip) →
 * one Lua script checks the rate limits, decides and records the order in the voucher's outbox →
 * answer "pending" and publish to RabbitMQ with the other orders of this event-loop turn. A
 * refused grab gives its id back. Everything after the script is best effort by design: if the
 * publish fails the order is still safe in the outbox and the worker's sweeper republishes it.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { OrderIdPool } from '@/lib/id/pool';
import { parseOrderMessage } from '@/lib/order/message';
import { publishSoon } from '@/lib/order/publish-batch';
import { consume, limitMessages } from '@/lib/rate-limit';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { grabVoucherInDb } from '@/lib/seckill/grab-db';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { refusalMemoryOf, refusalsFromMemory, type RememberedCode } from '@/lib/seckill/refusal-memory';
import { findSeckillVoucher } from '@/lib/seckill/seckill.repository';
import { waitForReplica } from '@/lib/seckill/replica-wait';

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

/** The refusals a process may remember (lib/seckill/refusal-memory.ts): facts about the voucher, not the user. */
const rememberable: Record<number, RememberedCode> = { [GrabCode.NOT_STARTED]: 'NOT_STARTED', [GrabCode.ENDED]: 'ENDED', [GrabCode.SOLD_OUT]: 'SOLD_OUT' };
const codeOf: Record<RememberedCode, number> = { NOT_STARTED: GrabCode.NOT_STARTED, ENDED: GrabCode.ENDED, SOLD_OUT: GrabCode.SOLD_OUT };

const g = globalThis as unknown as { __hmdpOrderIds?: OrderIdPool };

export async function grabVoucher(db: DB, redis: RedisClient, input: GrabInput): Promise<GrabResult> {
  if (env.SECKILL_STRATEGY === 'db') {
    await Promise.all([consume('seckillUser', input.userId), consume('seckillIp', input.ip)]);
    return grabVoucherInDb(db, redis, input);
  }
  // A voucher this process knows to be sold out / not started / ended: the same refusal, no Redis.
  const memory = refusalMemoryOf(redis);
  const known = memory?.lookup(input.voucherId);
  if (known) {
    refusalsFromMemory.inc({ outcome: known.toLowerCase() });
    throw refusals[codeOf[known]]!();
  }
  const mark = memory?.mark() ?? 0;
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
    const remember = rememberable[code];
    if (remember && memory) memory.record(input.voucherId, remember, mark, code === GrabCode.NOT_STARTED ? Number(payload) || 0 : undefined);
    if (code === GrabCode.RATE_LIMITED) throw rateLimited(first[2], Number(payload));
    throw (refusals[code] ?? refusals[GrabCode.UNKNOWN]!)();
  }

  // Opt-in: trade latency for grabs a failover cannot forget (measured in the README).
  if (env.SECKILL_REPLICA_WAIT_MS > 0) await waitForReplica(redis, input.voucherId, env.SECKILL_REPLICA_WAIT_MS);
  const parsed = parseOrderMessage(payload);
  if (!parsed.ok) throw new Error(`grab script wrote a bad outbox entry: ${parsed.reason}`);
  // The sweeper already knows this voucher: every preheat (including the rebuild above) puts it in
  // seckill:active, and a grab is only accepted on preheated keys.
  // Answered now; published with the rest of this turn's orders (lib/order/publish-batch.ts).
  publishSoon(parsed.msg);
  return { orderId, status: 'pending' };
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
