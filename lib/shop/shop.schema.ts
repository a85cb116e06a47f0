/** Input shapes of the shop API, validated before anything touches Redis or the DB. */
import { z } from 'zod';
import { idSchema } from '@/lib/http/parse';

/** Redis GEO accepts latitudes up to ±85.05112878. */
const LAT_MAX = 85.05112878;
const decimal = /^-?\d{1,3}(\.\d{1,12})?$/;

const coord = (max: number, what: string) =>
  z
    .string()
    .regex(decimal, `${what}格式不正确`)
    .transform(Number)
    .pipe(z.number().min(-max, `${what}超出范围`).max(max, `${what}超出范围`));

export const shopListQuery = z
  .object({
    typeId: idSchema,
    page: z
      .string()
      .regex(/^[1-9]\d{0,2}$/, 'page 必须是 1-999 的整数')
      .transform(Number)
      .default(1),
    x: coord(180, '经度').optional(),
    y: coord(LAT_MAX, '纬度').optional(),
  })
  .strict()
  .refine((q) => (q.x === undefined) === (q.y === undefined), { message: 'x 和 y 需同时提供', path: ['x'] });
export type ShopListQuery = z.infer<typeof shopListQuery>;

const imagePath = z
  .string()
  .trim()
  .max(255)
  .regex(/^(\/[\w\-./]+|https:\/\/[^\s,]+)$/, '图片地址需为站内路径或 https 链接');

export const shopPatch = z
  .object({
    name: z.string().trim().min(1, '店名不能为空').max(128),
    typeId: idSchema,
    images: z.array(imagePath).min(1).max(9).refine((a) => a.join(',').length <= 1024, '图片地址总长度过长'),
    area: z.string().trim().max(128),
    address: z.string().trim().min(1, '地址不能为空').max(255),
    x: z.number().finite().min(-180).max(180),
    y: z.number().finite().min(-LAT_MAX).max(LAT_MAX),
    /** Fen per person. */
    avgPrice: z.number().int().min(0).max(100_000_000),
    openHours: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-4]):[0-5]\d$/, '营业时间格式应为 HH:MM-HH:MM'),
  })
  .partial()
  .strict()
  .refine((p) => Object.keys(p).length > 0, '至少修改一项')
  .refine((p) => (p.x === undefined) === (p.y === undefined), { message: 'x 和 y 需同时修改', path: ['x'] });
export type ShopPatch = z.infer<typeof shopPatch>;
