import { describe, expect, it } from 'vitest';
import { AppError } from '@/lib/errors';
import { planEdit } from '@/lib/voucher/edit-rules';
import type { VoucherRow } from '@/lib/voucher/voucher.repository';

const NOW = new Date('2026-06-01T12:00:00Z');
const H = 3600_000;

function seckill(begin: number, end: number, over: Partial<VoucherRow> = {}): VoucherRow {
  return {
    id: '1', shop_id: '1', shop_name: 's', owner_id: '9', title: '秒杀', sub_title: '', rules: '', pay_value: '5900', actual_value: '10000',
    type: 1, status: 1, create_time: NOW, update_time: NOW, initial_stock: 100, stock: 60,
    begin_time: new Date(NOW.getTime() + begin), end_time: new Date(NOW.getTime() + end), ...over,
  };
}
const normal = (): VoucherRow => ({ ...seckill(0, 0), type: 0, initial_stock: null, stock: null, begin_time: null, end_time: null });

function fieldsOf(fn: () => unknown): Record<string, string> {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e.fields ?? { _: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('planEdit', () => {
  it('an upcoming sale: everything may change', () => {
    const p = planEdit(seckill(H, 2 * H), { title: '新', payValue: 100, stock: 200, beginTime: new Date(NOW.getTime() + 2 * H).toISOString(), endTime: new Date(NOW.getTime() + 3 * H).toISOString() }, NOW);
    expect(p.columns).toEqual({ title: '新', pay_value: 100 });
    expect(p.stockDelta).toBe(100);
    expect(p.window?.begin.getTime()).toBe(NOW.getTime() + 2 * H);
  });

  it('a live sale: text, stock and end; price and begin are refused by field', () => {
    const live = seckill(-H, H);
    expect(planEdit(live, { title: 'x', endTime: new Date(NOW.getTime() + 5 * H).toISOString(), stock: 150 }, NOW).stockDelta).toBe(50);
    const f = fieldsOf(() => planEdit(live, { payValue: 100, beginTime: new Date(NOW.getTime() - 2 * H).toISOString() }, NOW));
    expect(f.payValue).toContain('不能修改价格');
    expect(f.beginTime).toContain('已开始');
  });

  it('unchanged values are not edits (the form sends every field)', () => {
    const live = seckill(-H, H);
    const p = planEdit(live, { payValue: 5900, actualValue: 10000, stock: 100, beginTime: live.begin_time!.toISOString(), endTime: live.end_time!.toISOString(), title: 'y' }, NOW);
    expect(p.changed).toEqual(['title']);
  });

  it('never below what is sold (40 of 100 sold)', () => {
    expect(fieldsOf(() => planEdit(seckill(-H, H), { stock: 39 }, NOW)).stock).toContain('40');
    expect(planEdit(seckill(-H, H), { stock: 40 }, NOW).stockDelta).toBe(-60);
  });

  it('window rules: end after begin and after now', () => {
    expect(fieldsOf(() => planEdit(seckill(H, 2 * H), { endTime: new Date(NOW.getTime() + H / 2).toISOString() }, NOW)).endTime).toContain('晚于开始');
    expect(fieldsOf(() => planEdit(seckill(-H, H), { endTime: new Date(NOW.getTime() - 1000).toISOString() }, NOW)).endTime).toContain('当前时间');
  });

  it('an ended sale only takes text; a taken-down voucher nothing', () => {
    expect(planEdit(seckill(-2 * H, -H), { rules: 'r' }, NOW).changed).toEqual(['rules']);
    expect(fieldsOf(() => planEdit(seckill(-2 * H, -H), { stock: 200 }, NOW)).stock).toContain('已结束');
    expect(() => planEdit(seckill(H, 2 * H, { status: 2 }), { title: 'x' }, NOW)).toThrow('已下架');
  });

  it('a normal voucher: prices yes, stock and window no; price never above face value', () => {
    expect(planEdit(normal(), { payValue: 100 }, NOW).columns).toEqual({ pay_value: 100 });
    expect(fieldsOf(() => planEdit(normal(), { stock: 5 }, NOW)).stock).toContain('普通券');
    expect(fieldsOf(() => planEdit(normal(), { payValue: 20000 }, NOW)).payValue).toContain('面值');
  });
});
