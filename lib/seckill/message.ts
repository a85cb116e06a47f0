/**
 * The order message shared by producer (grab path, sweeper, dead-letter replay) and consumer
 * (worker). `v` versions the shape: a consumer meeting a version it does not know dead-letters
 * the message instead of guessing.
 *   v1  one order: {v:1, orderId, userId, voucherId, at}. The sweeper, retries, dead letters and
 *       replays always use it, and a worker consumes it whatever the grab path publishes.
 *   v2  the orders one web process accepted in one event-loop turn: {v:2, orders:[{orderId,
 *       userId, voucherId, at}, ...]}, one persistent message and one confirm for all of them
 *       (the broker's work per order was the grab's largest cost). The worker splits it into v1
 *       orders (splitOrderBatch), validated once, and acks the message once every order in it is settled.
 */
import { z } from 'zod';
import { idSchema } from '@/lib/http/parse';

export const orderMessageSchema = z.object({
  v: z.literal(1),
  orderId: idSchema,
  userId: idSchema,
  voucherId: idSchema,
  /** When Redis accepted the grab (ms since epoch, Redis clock); becomes the order's create_time (unless written late: payableFrom). */
  at: z.number().int().positive(),
});

export type OrderMessage = z.infer<typeof orderMessageSchema>;

/** At most this many orders in one v2 message (a turn that accepted more sends several). */
export const MAX_BATCH_ORDERS = 500;

const orderBatchSchema = z.object({
  v: z.literal(2),
  orders: z.array(orderMessageSchema.omit({ v: true })).min(1).max(MAX_BATCH_ORDERS),
});

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

/** One v2 message for these orders (1 to MAX_BATCH_ORDERS of them). */
export function encodeOrderBatch(msgs: OrderMessage[]): Buffer {
  return Buffer.from(JSON.stringify({ v: 2, orders: msgs.map(({ orderId, userId, voucherId, at }) => ({ orderId, userId, voucherId, at })) }));
}

/**
 * The orders of a v2 message, validated, as v1 messages; null for anything else (a v1 message, or
 * a body that is not a valid v2 batch: the caller handles it as one message, so an invalid batch
 * is dead-lettered whole with the reason parseOrderMessage gives).
 */
export function splitOrderBatch(body: Buffer): OrderMessage[] | null {
  // Cheap pre-check: most messages on the queue are batches, the rest are v1.
  if (!body.subarray(0, 16).toString('latin1').includes('"v":2')) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const r = orderBatchSchema.safeParse(raw);
  if (!r.success) return null;
  return r.data.orders.map((o) => ({ v: 1, ...o }));
}
