/**
 * Creating a voucher: tb_voucher (+ tb_seckill_voucher for a flash sale) and the audit row in one
 * transaction, then the flash sale is preheated into Redis (the preheat script sets stock, meta
 * and buyers in one atomic step), so it is grabbable the moment its window opens.
 */
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import type { RedisClient } from '@/lib/redis/types';
import type { DB, Executor } from '@/lib/db/client';
import { VoucherType } from '@/lib/db/schema';
import { recordAudit } from '@/lib/audit/audit';
import { requireShopAccess, type Actor } from '@/lib/access/access';
import { AppError } from '@/lib/errors';
import { findVoucherRow, insertSeckillVoucher, insertVoucher, lockShopAndCountOpenVouchers } from '@/lib/voucher/voucher.repository';
import { MAX_OPEN_VOUCHERS_PER_SHOP, type CreateVoucherInput } from '@/lib/voucher/voucher.schema';
import { auditSnapshot, toVoucherView } from '@/lib/voucher/voucher.view';
import { afterVoucherWrite, syncRedisLocked } from '@/lib/voucher/voucher-sync';
import { gateSale } from '@/lib/seckill/reservation/reservation';
import { insertRoom } from '@/lib/seckill/room/room.repository';
import { env } from '@/lib/env';

/** The transactional part; the caller owns `trx`. Returns the new voucher id. */
export async function insertVoucherAudited(trx: Executor, actor: Actor, input: CreateVoucherInput): Promise<string> {
  await requireShopAccess(trx, actor, input.shopId);
  if ((await lockShopAndCountOpenVouchers(trx, input.shopId, new Date())) >= MAX_OPEN_VOUCHERS_PER_SHOP) {
    throw new AppError('CONFLICT', `该店铺在售且未结束的券已达上限（${MAX_OPEN_VOUCHERS_PER_SHOP} 张），请先下架不再需要的券`);
  }
  const id = await insertVoucher(trx, {
    shop_id: input.shopId,
    title: input.title,
    sub_title: input.subTitle ?? '',
    rules: input.rules ?? '',
    pay_value: input.payValue,
    actual_value: input.actualValue,
    type: input.type === 1 ? VoucherType.SECKILL : VoucherType.NORMAL,
  });
  if (input.type === 1) {
    // The schema guarantees stock and window for type 1.
    await insertSeckillVoucher(trx, {
      voucher_id: id,
      initial_stock: input.stock!,
      stock: input.stock!,
      begin_time: new Date(input.beginTime!),
      end_time: new Date(input.endTime!),
      buckets: input.buckets ?? 1,
    });
    if (input.reservation) await gateSale(trx, id, input.reservation.mode, new Date(input.reservation.reserveBegin));
    if (input.room) await insertRoom(trx, { voucherId: id, powCost: input.room.powCost ?? env.ROOM_POW_COST });
  }
  const row = await findVoucherRow(trx, id);
  await recordAudit(trx, { actorId: actor.id, action: 'voucher.create', targetType: 'voucher', targetId: id, before: null, after: auditSnapshot(toVoucherView(row!, new Date())) });
  return id;
}

export interface CreatedVoucher {
  id: string;
  /** Flash sales only: false when Redis could not be preheated (saved; retry with preheat). */
  preheated?: boolean;
}

export async function createVoucher(db: DB, redis: RedisClient, actor: Actor, input: CreateVoucherInput): Promise<CreatedVoucher> {
  // Two shops creating flash sales at once insert into the same gap their open-voucher counts
  // share-locked: InnoDB may kill one as a deadlock victim, which wrote nothing and runs again.
  const id = await retryDeadlock(() => db.transaction().execute((trx) => insertVoucherAudited(trx, actor, input)));
  await afterVoucherWrite(db, redis, id);
  if (input.type !== 1) return { id };
  return { id, preheated: await syncRedisLocked(db, redis, id) };
}
