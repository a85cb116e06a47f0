/**
 * What the admin API accepts for vouchers: strict objects (unknown keys are refused),
 * money in integer fen, times as ISO strings with an offset. Every message names the field so the
 * form can show it inline; the route wrapper turns zod issues into `{ fields }`.
 */
import { z } from 'zod';
import { idSchema } from '@/lib/http/parse';
import { MAX_BUCKETS } from '@/lib/seckill/buckets/limits';

export const MAX_FEN = 10_000_000; // 10 万元
export const MAX_STOCK = 1_000_000;
export const MAX_WINDOW_DAYS = 366;
/**
 * Vouchers one shop may have on sale and not ended at once: the shop page lists them all (one Redis
 * read per flash sale and stock bucket, every view) and each flash sale is preheated keys and a
 * sweeper entry, so a merchant must not be able to create them without end.
 */
export const MAX_OPEN_VOUCHERS_PER_SHOP = 100;

// Newlines and tabs are fine in rules; other control characters are never typed by a person.
const noControl = /^(?:[^\p{Cc}]|[\n\r\t])*$/u;
const oneLine = /^[^\p{Cc}]*$/u;

export const titleSchema = z
  .string({ error: '请填写标题' })
  .trim()
  .min(1, '请填写标题')
  .max(64, '标题最多 64 个字')
  .regex(oneLine, '标题不能包含控制字符');
export const subTitleSchema = z.string().trim().max(128, '副标题最多 128 个字').regex(oneLine, '副标题不能包含控制字符');
export const rulesSchema = z.string().trim().max(1024, '使用规则最多 1024 个字').regex(noControl, '使用规则不能包含控制字符');

const fen = (label: string) =>
  z
    .number({ error: `请填写${label}` })
    .int(`${label}必须精确到分`)
    .min(1, `${label}必须大于 0`)
    .max(MAX_FEN, `${label}不能超过 10 万元`);
export const payValueSchema = fen('售价');
export const actualValueSchema = fen('面值');

export const stockSchema = z
  .number({ error: '请填写库存' })
  .int('库存必须是整数')
  .min(1, '库存至少为 1')
  .max(MAX_STOCK, `库存不能超过 ${MAX_STOCK.toLocaleString('en-US')}`);

export const isoTimeSchema = z.iso.datetime({ offset: true, error: '时间格式不正确' });

export const createVoucherInput = z
  .object({
    shopId: idSchema,
    title: titleSchema,
    subTitle: subTitleSchema.optional(),
    rules: rulesSchema.optional(),
    payValue: payValueSchema,
    actualValue: actualValueSchema,
    type: z.union([z.literal(0), z.literal(1)], { error: '类型必须是 0（普通券）或 1（秒杀券）' }),
    stock: stockSchema.optional(),
    beginTime: isoTimeSchema.optional(),
    endTime: isoTimeSchema.optional(),
    /** A reservation-only flash sale (docs/fair-sale.md#making-a-sale-reservation-only): set once, at creation. */
    reservation: z
      .object({
        mode: z.enum(['first-come', 'draw'], { error: '预约方式必须是 first-come（预约先到先得）或 draw（抽签）' }),
        reserveBegin: isoTimeSchema,
      })
      .strict()
      .optional(),
    /** Behind the waiting room and the bot gate (docs/fair-sale.md#the-waiting-room): set once, at creation; powCost is the challenge's altcha maxnumber. */
    room: z
      .object({
        powCost: z.number({ error: '验证难度必须是整数' }).int('验证难度必须是整数').min(1000, '验证难度不能小于 1000').max(10_000_000, '验证难度不能大于 10000000').optional(),
      })
      .strict()
      .optional(),
    /** Redis stock buckets of a flash sale (docs/buckets.md): 1 (default) to 16; set once, at creation. */
    buckets: z.number({ error: '分桶数必须是 1 ~ 16 的整数' }).int('分桶数必须是 1 ~ 16 的整数').min(1, '分桶数至少为 1').max(MAX_BUCKETS, `分桶数不能超过 ${MAX_BUCKETS}`).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.type === 0 && v.buckets !== undefined) ctx.addIssue({ code: 'custom', path: ['buckets'], message: '普通券没有库存分桶' });
    if (v.reservation && (v.buckets ?? 1) > 1) ctx.addIssue({ code: 'custom', path: ['buckets'], message: '预约抢购暂不支持库存分桶' });
    if (v.room && (v.buckets ?? 1) > 1) ctx.addIssue({ code: 'custom', path: ['buckets'], message: '排队抢购暂不支持库存分桶' });
    if (v.payValue > v.actualValue) ctx.addIssue({ code: 'custom', path: ['payValue'], message: '售价不能高于面值' });
    if (v.type === 0) {
      if (v.reservation !== undefined) ctx.addIssue({ code: 'custom', path: ['reservation'], message: '普通券不需要预约' });
      if (v.room !== undefined) ctx.addIssue({ code: 'custom', path: ['room'], message: '普通券不需要排队' });
      for (const k of ['stock', 'beginTime', 'endTime'] as const) {
        if (v[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: '普通券没有库存和抢购时间' });
      }
      return;
    }
    if (v.stock === undefined) ctx.addIssue({ code: 'custom', path: ['stock'], message: '秒杀券必须填写库存' });
    if (v.beginTime === undefined) ctx.addIssue({ code: 'custom', path: ['beginTime'], message: '秒杀券必须填写开始时间' });
    if (v.endTime === undefined) ctx.addIssue({ code: 'custom', path: ['endTime'], message: '秒杀券必须填写结束时间' });
    if (v.beginTime && v.endTime) {
      const issue = windowIssue(new Date(v.beginTime), new Date(v.endTime), new Date());
      if (issue) ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message });
    }
    if (v.reservation && v.beginTime && Date.parse(v.reservation.reserveBegin) >= Date.parse(v.beginTime)) {
      ctx.addIssue({ code: 'custom', path: ['reservation', 'reserveBegin'], message: '预约开始时间必须早于秒杀开始时间' });
    }
  });
export type CreateVoucherInput = z.infer<typeof createVoucherInput>;

/** The window rules every write checks, on create here and with stored values on edit. */
export function windowIssue(begin: Date, end: Date, now: Date): { field: 'beginTime' | 'endTime'; message: string } | null {
  if (end.getTime() <= begin.getTime()) return { field: 'endTime', message: '结束时间必须晚于开始时间' };
  if (end.getTime() <= now.getTime()) return { field: 'endTime', message: '结束时间必须晚于当前时间' };
  if (end.getTime() - begin.getTime() > MAX_WINDOW_DAYS * 86_400_000) return { field: 'endTime', message: `活动时长不能超过 ${MAX_WINDOW_DAYS} 天` };
  if (end.getTime() - now.getTime() > MAX_WINDOW_DAYS * 86_400_000) return { field: 'endTime', message: `结束时间不能晚于 ${MAX_WINDOW_DAYS} 天后` };
  return null;
}

/** PATCH: any subset of the editable fields, or `{ status: 'taken_down' }` alone. */
export const updateVoucherInput = z
  .object({
    title: titleSchema.optional(),
    subTitle: subTitleSchema.optional(),
    rules: rulesSchema.optional(),
    payValue: payValueSchema.optional(),
    actualValue: actualValueSchema.optional(),
    /** The new total stock (everything ever put on sale), not a delta. */
    stock: stockSchema.optional(),
    beginTime: isoTimeSchema.optional(),
    endTime: isoTimeSchema.optional(),
    status: z.literal('taken_down', { error: '状态只能改为 taken_down（下架）' }).optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    const keys = Object.keys(v).filter((k) => v[k as keyof typeof v] !== undefined);
    if (keys.length === 0) ctx.addIssue({ code: 'custom', path: [], message: '没有要修改的内容' });
    if (v.status && keys.length > 1) ctx.addIssue({ code: 'custom', path: ['status'], message: '下架时不能同时修改其他内容' });
  });
export type UpdateVoucherInput = z.infer<typeof updateVoucherInput>;

export const addStockInput = z
  .object({ amount: z.number({ error: '请填写追加数量' }).int('追加数量必须是整数').min(1, '追加数量至少为 1').max(MAX_STOCK, `追加数量不能超过 ${MAX_STOCK.toLocaleString('en-US')}`) })
  .strict();

export const voucherStates = ['live', 'upcoming', 'ended', 'taken_down'] as const;
export type VoucherState = (typeof voucherStates)[number];

export const listVouchersQuery = z
  .object({
    shopId: idSchema.optional(),
    state: z.enum(voucherStates, { error: '筛选条件只能是 live / upcoming / ended / taken_down' }).optional(),
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    size: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();
export type ListVouchersQuery = z.infer<typeof listVouchersQuery>;
