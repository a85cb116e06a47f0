/**
 * Editing and taking down a voucher. Everything runs under the voucher's admin lock; MySQL
 * changes and their audit row commit together; Redis follows:
 *
 * - lowering the total stock takes unsold stock out of Redis first (atomically, refused when
 *   fewer remain unsold than asked), then MySQL; a failed MySQL write gives it back;
 * - raising it goes through seckill's addSeckillStock (Redis and MySQL together, safe mid-sale),
 *   after the rest of the edit committed, so a refused edit raises nothing;
 * - window changes and take-downs are re-preheated from MySQL after the commit, retried until
 *   Redis agrees (syncRedisUntilAgreed); the worker refuses orders grabbed outside MySQL's window.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { AppError, notFound } from '@/lib/errors';
import { recordAudit } from '@/lib/audit/audit';
import type { Actor } from '@/lib/access/access';
import { readSeckillState } from '@/lib/seckill/state';
import { planEdit } from '@/lib/voucher/edit-rules';
import { lockVoucherRow, shiftSeckillStock, updateSeckillWindow, updateVoucherColumns } from '@/lib/voucher/voucher.repository';
import type { UpdateVoucherInput } from '@/lib/voucher/voucher.schema';
import { getVoucher, requireVoucherAccess } from '@/lib/voucher/voucher.service';
import { auditSnapshot, toVoucherView, voucherState, type VoucherView } from '@/lib/voucher/voucher.view';
import { findBucketCount } from '@/lib/seckill/seckill.repository';
import { findGate } from '@/lib/seckill/reservation/reservation.repository';
import { afterVoucherWrite, syncRedisUntilAgreed, takeRedisStock, underVoucherLock } from '@/lib/voucher/voucher-sync';
import { addStockAudited } from '@/lib/voucher/voucher-stock';

export interface UpdatedVoucher {
  voucher: VoucherView;
  /** False when MySQL changed but Redis could not follow (retry with preheat). */
  redisSynced: boolean;
}

export async function updateVoucher(db: DB, redis: RedisClient, actor: Actor, id: string, patch: UpdateVoucherInput): Promise<UpdatedVoucher> {
  await requireVoucherAccess(db, actor, id);
  if (patch.status === 'taken_down') return takeDownVoucher(db, redis, actor, id);
  return underVoucherLock(id, async () => {
    // Validate everything before writing anything.
    const plan = planEdit(await requireVoucherAccess(db, actor, id), patch, new Date());
    if (plan.changed.length === 0) return { voucher: await getVoucher(db, redis, actor, id), redisSynced: true };
    if (plan.window) await assertOpensAfterReservations(db, id, plan.window.begin);

    let giveBack: (() => Promise<void>) | null = null;
    let needsPreheat = plan.window !== null;
    if (plan.stockDelta < 0) {
      const r = await takeRedisStock(redis, id, -plan.stockDelta, () => findBucketCount(db, id));
      if (r.status === 'short') throw await soldTooMuch(redis, id);
      if (r.status === 'ok') giveBack = r.giveBack;
      else needsPreheat = true; // not in Redis: MySQL's guard decides, preheat rebuilds
    }
    try {
      await db.transaction().execute(async (trx) => {
        const row = await lockVoucherRow(trx, id);
        if (!row) throw notFound('优惠券');
        const before = toVoucherView(row, new Date());
        // Re-plan on the locked row: the sale may have started since the first check.
        const locked = planEdit(row, { ...patch, stock: undefined }, new Date());
        await updateVoucherColumns(trx, id, locked.columns);
        if (locked.window) await updateSeckillWindow(trx, id, locked.window.begin, locked.window.end);
        if (plan.stockDelta < 0 && !(await shiftSeckillStock(trx, id, plan.stockDelta))) {
          throw new AppError('VALIDATION', '库存不能低于已售出数量', { fields: { stock: '库存不能低于已售出数量' } });
        }
        const after = toVoucherView((await lockVoucherRow(trx, id))!, new Date());
        const changedNow = plan.stockDelta > 0 ? plan.changed.filter((k) => k !== 'stock') : plan.changed;
        if (changedNow.length > 0) {
          await recordAudit(trx, { actorId: actor.id, action: 'voucher.update', targetType: 'voucher', targetId: id, before: auditSnapshot(before), after: auditSnapshot(after) });
        }
      });
    } catch (e) {
      if (giveBack) await giveBack();
      throw e;
    }
    // Raised only once the rest of the edit has committed: an edit the locked re-check refuses
    // (the sale opened meanwhile) raises nothing. A raise that fails after it (Redis away) leaves
    // the rest saved and says so; sending the same edit again raises the stock alone.
    if (plan.stockDelta > 0) await addStockAudited(db, redis, actor, id, plan.stockDelta);
    await afterVoucherWrite(db, redis, id);
    const redisSynced = needsPreheat ? await syncRedisUntilAgreed(db, redis, id) : true;
    return { voucher: await getVoucher(db, redis, actor, id), redisSynced };
  });
}

/**
 * A reservation-only sale takes reservations in [reserveBegin, begin): a start moved to or before
 * the opening (which no edit changes) leaves that window empty, and nobody could ever buy. The
 * create schema refuses the same.
 */
async function assertOpensAfterReservations(db: DB, id: string, begin: Date): Promise<void> {
  const gate = await findGate(db, id);
  if (gate && begin.getTime() <= gate.reserveBegin.getTime()) {
    const message = '开始时间必须晚于预约开始时间';
    throw new AppError('VALIDATION', message, { fields: { beginTime: message } });
  }
}

async function soldTooMuch(redis: RedisClient, id: string): Promise<AppError> {
  const s = await readSeckillState(redis, id);
  const sold = s ? s.initial - s.remaining : null;
  const message = sold === null ? '剩余库存不足，不能减少这么多' : `库存不能低于已售出的 ${sold} 张`;
  return new AppError('VALIDATION', message, { fields: { stock: message } });
}

/**
 * Takes a voucher off sale. A flash sale's window is also closed in MySQL (end = now), so every
 * path that reads the window — the grab script after the re-preheat, the shop page, a later
 * repair — agrees that it can no longer be bought. Taking down twice is a no-op.
 */
export async function takeDownVoucher(db: DB, redis: RedisClient, actor: Actor, id: string): Promise<UpdatedVoucher> {
  return underVoucherLock(id, async () => {
    const changed = await db.transaction().execute(async (trx) => {
      const row = await lockVoucherRow(trx, id);
      if (!row) throw notFound('优惠券');
      const now = new Date();
      const state = voucherState(row, now);
      if (state === 'taken_down') return false;
      const before = toVoucherView(row, now);
      await updateVoucherColumns(trx, id, { status: VoucherStatus.TAKEN_DOWN });
      if (row.type === VoucherType.SECKILL && (state === 'live' || state === 'upcoming')) {
        const begin = row.begin_time! < now ? row.begin_time! : new Date(now.getTime() - 1);
        await updateSeckillWindow(trx, id, begin, now);
      }
      const after = toVoucherView((await lockVoucherRow(trx, id))!, now);
      await recordAudit(trx, { actorId: actor.id, action: 'voucher.take-down', targetType: 'voucher', targetId: id, before: auditSnapshot(before), after: auditSnapshot(after) });
      return row.type === VoucherType.SECKILL;
    });
    await afterVoucherWrite(db, redis, id);
    const redisSynced = changed ? await syncRedisUntilAgreed(db, redis, id) : true;
    return { voucher: await getVoucher(db, redis, actor, id), redisSynced };
  });
}
