/**
 * The grab path (README: Flash sale): rate limits → order id → one Lua script decides and records the
 * order in the voucher's outbox → publish to RabbitMQ → answer "pending". Everything after the
 * script is best effort by design: if the publish fails the order is still safe in the outbox
 * and the worker's sweeper republishes it.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { nextOrderId } from '@/lib/id';
import { log } from '@/lib/log';
import { parseOrderMessage } from '@/lib/order/message';
import { publishOrder } from '@/lib/order/publish';
import { consume } from '@/lib/rate-limit';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { grabVoucherInDb } from '@/lib/seckill/grab-db';
import { preheatVoucher } from '@/lib/seckill/preheat';
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

export const GrabCode = { ACCEPTED: 0, UNKNOWN: 1, NOT_STARTED: 2, ENDED: 3, ALREADY_BOUGHT: 4, SOLD_OUT: 5 } as const;

const refusals: Record<number, () => AppError> = {
  [GrabCode.UNKNOWN]: () => notFound('秒杀券'),
  [GrabCode.NOT_STARTED]: () => new AppError('NOT_STARTED', '秒杀尚未开始'),
  [GrabCode.ENDED]: () => new AppError('ENDED', '秒杀已经结束'),
  [GrabCode.ALREADY_BOUGHT]: () => new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了'),
  [GrabCode.SOLD_OUT]: () => new AppError('SOLD_OUT', '已售罄'),
};

export async function grabVoucher(db: DB, redis: RedisClient, input: GrabInput): Promise<GrabResult> {
  await Promise.all([consume('seckillUser', input.userId), consume('seckillIp', input.ip)]);
  if (env.SECKILL_STRATEGY === 'db') return grabVoucherInDb(db, redis, input);

  const orderId = await nextOrderId(redis);
  let [code, payload] = await runGrabScript(redis, input.voucherId, input.userId, orderId);
  // Not in Redis: a voucher created without a preheat, or Redis lost its keys. Rebuild and retry once.
  if (code === GrabCode.UNKNOWN && (await preheatIfOnSale(db, redis, input.voucherId))) {
    [code, payload] = await runGrabScript(redis, input.voucherId, input.userId, orderId);
  }
  if (code !== GrabCode.ACCEPTED || !payload) throw (refusals[code] ?? refusals[GrabCode.UNKNOWN]!)();

  // Opt-in: trade latency for grabs a failover cannot forget (measured in the README).
  if (env.SECKILL_REPLICA_WAIT_MS > 0) await waitForReplica(redis, input.voucherId, env.SECKILL_REPLICA_WAIT_MS);
  const parsed = parseOrderMessage(payload);
  if (!parsed.ok) throw new Error(`grab script wrote a bad outbox entry: ${parsed.reason}`);
  // The sweeper already knows this voucher: every preheat (including the rebuild above) puts it in
  // seckill:active, and a grab is only accepted on preheated keys.
  await publishOrder(parsed.msg).catch((err: unknown) =>
    log.warn({ orderId, voucherId: input.voucherId, err: err instanceof Error ? err.message : String(err) }, 'order publish failed; it stays in the outbox for the sweeper'),
  );
  return { orderId, status: 'pending' };
}

function runGrabScript(redis: RedisClient, voucherId: string, userId: string, orderId: string): Promise<[number, string?]> {
  return runScript<[number, string?]>(
    redis,
    'seckill-grab',
    [keys.seckillMeta(voucherId), keys.seckillStock(voucherId), keys.seckillBuyers(voucherId), keys.seckillPending(voucherId)],
    [voucherId, userId, orderId],
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
