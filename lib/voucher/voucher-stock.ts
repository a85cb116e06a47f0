/** Preheat / repair and add-stock actions of the console, each audited and under the voucher lock. */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherType } from '@/lib/db/schema';
import { AppError } from '@/lib/errors';
import { recordAudit } from '@/lib/audit/audit';
import type { Actor } from '@/lib/access/access';
import { addSeckillStock, preheatVoucher } from '@/lib/seckill/preheat';
import { readSeckillState } from '@/lib/seckill/state';
import { getVoucher, requireVoucherAccess } from '@/lib/voucher/voucher.service';
import { MAX_STOCK } from '@/lib/voucher/voucher.schema';
import { voucherState, type VoucherView } from '@/lib/voucher/voucher.view';
import { underVoucherLock } from '@/lib/voucher/voucher-sync';

function requireSeckill(row: { type: number }, what: string): void {
  if (row.type !== VoucherType.SECKILL) throw new AppError('CONFLICT', `普通券没有秒杀库存，不能${what}`);
}

/**
 * Rebuilds the voucher's Redis state from MySQL (seckill's preheatVoucher: buyers only grow,
 * remaining = initial − buyers), so it is safe in the middle of a sale. Returns the new state.
 */
export async function preheatVoucherAudited(db: DB, redis: RedisClient, actor: Actor, id: string) {
  requireSeckill(await requireVoucherAccess(db, actor, id), '预热');
  return underVoucherLock(id, async () => {
    const before = await readSeckillState(redis, id).catch(() => null);
    const after = await preheatVoucher(db, redis, id);
    await db.transaction().execute((trx) =>
      recordAudit(trx, { actorId: actor.id, action: 'voucher.preheat', targetType: 'voucher', targetId: id, before, after }),
    );
    return after;
  });
}

/** Puts `amount` more on sale, mid-sale included; the caller holds the voucher lock. */
export async function addStockAudited(db: DB, redis: RedisClient, actor: Actor, id: string, amount: number): Promise<void> {
  const before = await requireVoucherAccess(db, actor, id);
  await addSeckillStock(db, redis, id, amount);
  const after = await requireVoucherAccess(db, actor, id);
  await db.transaction().execute((trx) =>
    recordAudit(trx, {
      actorId: actor.id,
      action: 'voucher.add-stock',
      targetType: 'voucher',
      targetId: id,
      before: { stock: Number(before.initial_stock), remaining: Number(before.stock) },
      after: { stock: Number(after.initial_stock), remaining: Number(after.stock), added: amount },
    }),
  );
}

export async function addStock(db: DB, redis: RedisClient, actor: Actor, id: string, amount: number): Promise<VoucherView> {
  const row = await requireVoucherAccess(db, actor, id);
  requireSeckill(row, '追加库存');
  return underVoucherLock(id, async () => {
    const fresh = await requireVoucherAccess(db, actor, id);
    const state = voucherState(fresh, new Date());
    if (state === 'taken_down' || state === 'ended') throw new AppError('CONFLICT', state === 'ended' ? '活动已结束，不能追加库存' : '已下架的券不能追加库存');
    if (Number(fresh.initial_stock) + amount > MAX_STOCK) {
      const message = `总库存不能超过 ${MAX_STOCK.toLocaleString('en-US')}`;
      throw new AppError('VALIDATION', message, { fields: { amount: message } });
    }
    await addStockAudited(db, redis, actor, id, amount);
    return getVoucher(db, redis, actor, id);
  });
}
