/** Voucher rows as the admin API returns them, with the state a sale is in right now. */
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import type { VoucherState } from '@/lib/voucher/voucher.schema';
import type { VoucherRow } from '@/lib/voucher/voucher.repository';

export interface VoucherView {
  id: string;
  shopId: string;
  shopName: string;
  title: string;
  subTitle: string;
  rules: string;
  /** Fen. */
  payValue: number;
  actualValue: number;
  type: 0 | 1;
  status: 'on_sale' | 'taken_down';
  state: VoucherState;
  seckill: { initialStock: number; stock: number; beginTime: string; endTime: string } | null;
  /** Redis remaining stock for a live flash sale; null when not live, not preheated or unknown. */
  remaining: number | null;
  createTime: string;
  updateTime: string;
}

export function voucherState(row: Pick<VoucherRow, 'status' | 'type' | 'begin_time' | 'end_time'>, now: Date): VoucherState {
  if (row.status === VoucherStatus.TAKEN_DOWN) return 'taken_down';
  if (row.type !== VoucherType.SECKILL || !row.begin_time || !row.end_time) return 'live';
  if (now < row.begin_time) return 'upcoming';
  if (now >= row.end_time) return 'ended';
  return 'live';
}

export function toVoucherView(row: VoucherRow, now: Date, remaining: number | null = null): VoucherView {
  const seckill =
    row.type === VoucherType.SECKILL && row.begin_time && row.end_time
      ? { initialStock: Number(row.initial_stock), stock: Number(row.stock), beginTime: row.begin_time.toISOString(), endTime: row.end_time.toISOString() }
      : null;
  return {
    id: String(row.id),
    shopId: String(row.shop_id),
    shopName: row.shop_name,
    title: row.title,
    subTitle: row.sub_title,
    rules: row.rules,
    payValue: Number(row.pay_value),
    actualValue: Number(row.actual_value),
    type: row.type === VoucherType.SECKILL ? 1 : 0,
    status: row.status === VoucherStatus.TAKEN_DOWN ? 'taken_down' : 'on_sale',
    state: voucherState(row, now),
    seckill,
    remaining,
    createTime: row.create_time.toISOString(),
    updateTime: row.update_time.toISOString(),
  };
}

/** The audit snapshot of a voucher: what an edit can change, nothing derived. */
export function auditSnapshot(v: VoucherView) {
  return {
    shopId: v.shopId,
    title: v.title,
    subTitle: v.subTitle,
    rules: v.rules,
    payValue: v.payValue,
    actualValue: v.actualValue,
    type: v.type,
    status: v.status,
    ...(v.seckill ? { stock: v.seckill.initialStock, beginTime: v.seckill.beginTime, endTime: v.seckill.endTime } : {}),
  };
}
