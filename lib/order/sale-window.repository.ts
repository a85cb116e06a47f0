/**
 * The sale window MySQL holds for each voucher of a batch, read inside the persisting
 * transaction. Redis decides a grab, but if Redis missed a take-down or a window edit (it was
 * briefly unreachable), MySQL still knows: an order grabbed outside the window MySQL holds is
 * not written (the worker dead-letters it, see lib/order/off-sale.ts).
 */
import type { Executor } from '@/lib/db/client';

export interface SaleWindow {
  beginMs: number;
  endMs: number;
  /** The voucher's price now: the orders written in this batch keep it. */
  payValue: number;
}

export async function saleWindows(trx: Executor, voucherIds: string[]): Promise<Map<string, SaleWindow>> {
  const out = new Map<string, SaleWindow>();
  if (voucherIds.length === 0) return out;
  const rows = await trx
    .selectFrom('tb_seckill_voucher as s')
    .innerJoin('tb_voucher as v', 'v.id', 's.voucher_id')
    .select(['s.voucher_id', 's.begin_time', 's.end_time', 'v.pay_value'])
    .where('s.voucher_id', 'in', voucherIds)
    .execute();
  for (const r of rows) out.set(String(r.voucher_id), { beginMs: r.begin_time.getTime(), endMs: r.end_time.getTime(), payValue: Number(r.pay_value) });
  return out;
}
