/**
 * What an edit may change, by the state the voucher is in (pure, so it is unit-tested alone):
 *
 *   normal voucher on sale  text, prices
 *   flash sale, upcoming    everything: text, prices, total stock, window
 *   flash sale, live        text, total stock (never below what is sold), end time
 *   flash sale, ended       text
 *   taken down              nothing
 *
 * Fields sent with their current value are not changes (the edit form sends every field).
 */
import type { Updateable } from 'kysely';
import { VoucherType, type VoucherTable } from '@/lib/db/schema';
import { AppError } from '@/lib/errors';
import type { VoucherRow } from '@/lib/voucher/voucher.repository';
import { windowIssue, type UpdateVoucherInput } from '@/lib/voucher/voucher.schema';
import { voucherState } from '@/lib/voucher/voucher.view';

export interface EditPlan {
  columns: Updateable<VoucherTable>;
  window: { begin: Date; end: Date } | null;
  /** Change of the total stock; < 0 takes unsold stock away. */
  stockDelta: number;
  changed: (keyof UpdateVoucherInput)[];
}

const TEXT = ['title', 'subTitle', 'rules'] as const;

export function planEdit(row: VoucherRow, patch: UpdateVoucherInput, now: Date): EditPlan {
  const state = voucherState(row, now);
  if (state === 'taken_down') throw new AppError('CONFLICT', '已下架的券不能修改');
  const seckill = row.type === VoucherType.SECKILL;

  const current = {
    title: row.title,
    subTitle: row.sub_title,
    rules: row.rules,
    payValue: Number(row.pay_value),
    actualValue: Number(row.actual_value),
    stock: row.initial_stock === null ? undefined : Number(row.initial_stock),
    beginTime: row.begin_time?.getTime(),
    endTime: row.end_time?.getTime(),
  };
  const changed: (keyof UpdateVoucherInput)[] = [];
  for (const k of [...TEXT, 'payValue', 'actualValue', 'stock'] as const) {
    if (patch[k] !== undefined && patch[k] !== current[k]) changed.push(k);
  }
  for (const k of ['beginTime', 'endTime'] as const) {
    if (patch[k] !== undefined && new Date(patch[k]).getTime() !== current[k]) changed.push(k);
  }

  const allowed = new Set<string>(TEXT);
  if (!seckill || state === 'upcoming') allowed.add('payValue').add('actualValue');
  if (seckill && state !== 'ended') allowed.add('stock').add('endTime');
  if (seckill && state === 'upcoming') allowed.add('beginTime');
  const fields: Record<string, string> = {};
  for (const k of changed) {
    if (allowed.has(k)) continue;
    if (!seckill) fields[k] = '普通券没有库存和抢购时间';
    else if (state === 'ended') fields[k] = '活动已结束，只能修改标题、副标题和使用规则';
    else fields[k] = k === 'beginTime' ? '活动已开始，不能修改开始时间' : '活动进行中，不能修改价格';
  }

  const pay = patch.payValue ?? current.payValue;
  const actual = patch.actualValue ?? current.actualValue;
  if (pay > actual) fields.payValue ??= '售价不能高于面值';

  let window: EditPlan['window'] = null;
  if (changed.includes('beginTime') || changed.includes('endTime')) {
    const begin = new Date(patch.beginTime ?? current.beginTime!);
    const end = new Date(patch.endTime ?? current.endTime!);
    const issue = windowIssue(begin, end, now);
    if (issue) fields[issue.field] ??= issue.message;
    window = { begin, end };
  }

  const stockDelta = changed.includes('stock') ? patch.stock! - current.stock! : 0;
  if (stockDelta < 0) {
    const sold = current.stock! - Number(row.stock);
    if (patch.stock! < sold) fields.stock ??= `库存不能低于已售出的 ${sold} 张`;
  }

  if (Object.keys(fields).length > 0) {
    const first = Object.values(fields)[0]!;
    throw new AppError('VALIDATION', first, { fields });
  }

  const columns: Updateable<VoucherTable> = {};
  if (changed.includes('title')) columns.title = patch.title!;
  if (changed.includes('subTitle')) columns.sub_title = patch.subTitle!;
  if (changed.includes('rules')) columns.rules = patch.rules!;
  if (changed.includes('payValue')) columns.pay_value = patch.payValue!;
  if (changed.includes('actualValue')) columns.actual_value = patch.actualValue!;
  return { columns, window, stockDelta, changed };
}
