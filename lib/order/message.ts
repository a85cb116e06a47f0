/**
 * The order message shared by producer (grab path, sweeper, dead-letter replay) and consumer
 * (worker). `v` versions the shape: a consumer meeting a version it does not know dead-letters
 * the message instead of guessing.
 */
import { z } from 'zod';
import { idSchema } from '@/lib/http/parse';

export const orderMessageSchema = z.object({
  v: z.literal(1),
  orderId: idSchema,
  userId: idSchema,
  voucherId: idSchema,
  /** When Redis accepted the grab (ms since epoch, Redis clock); becomes the order's create_time. */
  at: z.number().int().positive(),
});

export type OrderMessage = z.infer<typeof orderMessageSchema>;

export type ParsedMessage = { ok: true; msg: OrderMessage } | { ok: false; reason: string };

export function parseOrderMessage(body: Buffer | string): ParsedMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { ok: false, reason: 'unparseable: body is not JSON' };
  }
  const r = orderMessageSchema.safeParse(raw);
  if (r.success) return { ok: true, msg: r.data };
  const issue = r.error.issues[0];
  return { ok: false, reason: `unparseable: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}` };
}

/** Only the contract fields, in a fixed order (outbox entries may carry sweeper bookkeeping). */
export function encodeOrderMessage(msg: OrderMessage): Buffer {
  const { v, orderId, userId, voucherId, at } = msg;
  return Buffer.from(JSON.stringify({ v, orderId, userId, voucherId, at }));
}
