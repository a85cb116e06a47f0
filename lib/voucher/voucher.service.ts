/** Reading vouchers for the console: access-checked, with live Redis stock where it matters. */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { VoucherType } from '@/lib/db/schema';
import { notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { assertOwns, ownerScope, requireShopAccess, type Actor } from '@/lib/access/access';
import { readSeckillState } from '@/lib/seckill/state';
import { findVoucherRow, listVoucherRows, type VoucherRow } from '@/lib/voucher/voucher.repository';
import type { ListVouchersQuery } from '@/lib/voucher/voucher.schema';
import { toVoucherView, type VoucherView } from '@/lib/voucher/voucher.view';

/** The voucher if the actor may manage it: 404 when missing, 403 when another merchant's. */
export async function requireVoucherAccess(db: Executor, actor: Actor, id: string): Promise<VoucherRow> {
  const row = await findVoucherRow(db, id);
  if (!row) throw notFound('优惠券');
  assertOwns(actor, row.owner_id === null ? null : String(row.owner_id), '该优惠券');
  return row;
}

/** Redis remaining stock, or null when not preheated or Redis does not answer (the page still renders). */
async function redisRemaining(redis: RedisClient, id: string): Promise<number | null> {
  try {
    return (await readSeckillState(redis, id))?.remaining ?? null;
  } catch (err) {
    log.warn({ err, voucherId: id }, 'reading seckill state failed');
    return null;
  }
}

export async function getVoucher(db: Executor, redis: RedisClient, actor: Actor, id: string): Promise<VoucherView> {
  const row = await requireVoucherAccess(db, actor, id);
  const remaining = row.type === VoucherType.SECKILL ? await redisRemaining(redis, id) : null;
  return toVoucherView(row, new Date(), remaining);
}

export interface VoucherPage {
  items: VoucherView[];
  page: number;
  size: number;
  hasMore: boolean;
}

export async function listVouchers(db: Executor, redis: RedisClient, actor: Actor, q: ListVouchersQuery): Promise<VoucherPage> {
  const ownerId = ownerScope(actor);
  if (q.shopId) await requireShopAccess(db, actor, q.shopId);
  const now = new Date();
  const rows = await listVoucherRows(db, { ownerId, shopId: q.shopId, state: q.state, now, limit: q.size + 1, offset: (q.page - 1) * q.size });
  const pageRows = rows.slice(0, q.size);
  const items = await Promise.all(
    pageRows.map(async (row) => {
      const view = toVoucherView(row, now);
      if (view.seckill && view.state === 'live') view.remaining = await redisRemaining(redis, view.id);
      return view;
    }),
  );
  return { items, page: q.page, size: q.size, hasMore: rows.length > q.size };
}
