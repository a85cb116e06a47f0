import { z } from 'zod';
import { idSchema } from '@/lib/http/parse';
import { IMAGE_NAME } from '@/lib/upload/image';

/** Titles and texts are plain text: shown as text, never as HTML, so only length and control characters matter. */
const plain = (max: number, what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what}不能为空`)
    .max(max, `${what}最多 ${max} 个字`)
    .refine((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u202a-\u202e\u2066-\u2069]/.test(s), `${what}含有不可见的控制字符`);

export const blogCreateSchema = z
  .object({
    shopId: idSchema,
    title: plain(64, '标题'),
    content: plain(2000, '正文'),
    images: z.array(z.string().regex(IMAGE_NAME, '图片名不合法')).min(1, '至少一张图片').max(9, '最多 9 张图片'),
  })
  .strict();
export type BlogCreate = z.infer<typeof blogCreateSchema>;

export const blogUpdateSchema = z
  .object({ title: plain(64, '标题').optional(), content: plain(2000, '正文').optional() })
  .strict()
  .refine((p) => p.title !== undefined || p.content !== undefined, '没有要修改的内容');
export type BlogUpdate = z.infer<typeof blogUpdateSchema>;

export const commentCreateSchema = z.object({ content: plain(500, '评论') }).strict();

export const pageQuerySchema = z.object({ page: z.coerce.number().int().min(1).max(1000).default(1) }).strict();
