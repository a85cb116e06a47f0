/**
 * Dead letters: order messages the worker gave up on (retries exhausted or unparseable), kept in
 * MySQL for a person to decide. Replay publishes the order again (the worker inserts orders
 * idempotently by id, so a replay of an order that did land changes nothing); discard closes it.
 * Each decision locks its row, so double clicks and two admins never act twice, and is audited.
 */
import { z } from 'zod';
import type { DB, Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { recordAudit } from '@/lib/audit/audit';
import { assertOwns, ownerScope, type Actor } from '@/lib/access/access';
import {
  countDeadLetters, listDeadLetterRows, lockDeadLetterRow, setDeadLetterStatus,
  type DeadLetterRow, type DeadLetterStatus,
} from '@/lib/admin/dead-letter.repository';
import { orderMessageSchema, type OrderMessage } from '@/lib/seckill/message';
import { publishOrder } from '@/lib/seckill/publish';
import { orderIsPersisted } from '@/lib/order/tombstone.repository';

export const listDeadLettersQuery = z
  .object({
    status: z.enum(['dead', 'replayed', 'discarded', 'all']).default('dead'),
    voucherId: z.string().regex(/^[1-9]\d{0,18}$/, 'voucherId 不合法').optional(),
    page: z.coerce.number().int().min(1).max(10_000).default(1),
    size: z.coerce.number().int().min(1).max(100).default(50),
  })
  .strict();

export interface DeadLetterView {
  id: string;
  orderId: string | null;
  voucherId: string | null;
  voucherTitle: string | null;
  userId: string | null;
  reason: string;
  attempts: number;
  status: DeadLetterStatus;
  payload: string;
  createTime: string;
  updateTime: string;
}

const toView = (r: DeadLetterRow): DeadLetterView => ({
  id: String(r.id),
  orderId: r.order_id === null ? null : String(r.order_id),
  voucherId: r.voucher_id === null ? null : String(r.voucher_id),
  voucherTitle: r.voucher_title,
  userId: r.user_id === null ? null : String(r.user_id),
  reason: r.reason,
  attempts: r.attempts,
  status: r.status,
  payload: r.payload.length > 2000 ? `${r.payload.slice(0, 2000)}…` : r.payload,
  createTime: r.create_time.toISOString(),
  updateTime: r.update_time.toISOString(),
});

export async function listDeadLetters(db: Executor, actor: Actor, q: z.infer<typeof listDeadLettersQuery>) {
  const filter = { ownerId: ownerScope(actor), status: q.status === 'all' ? undefined : q.status, voucherId: q.voucherId };
  const [rows, waiting] = await Promise.all([
    listDeadLetterRows(db, { ...filter, limit: q.size + 1, offset: (q.page - 1) * q.size }),
    countDeadLetters(db, { ownerId: filter.ownerId, status: 'dead', voucherId: q.voucherId }),
  ]);
  return { items: rows.slice(0, q.size).map(toView), page: q.page, size: q.size, hasMore: rows.length > q.size, waiting };
}

/** The message to publish again: the stored body when it parses, else the columns the worker kept. */
function messageOf(r: DeadLetterRow): OrderMessage | null {
  try {
    const parsed = orderMessageSchema.safeParse(JSON.parse(r.payload));
    if (parsed.success) return parsed.data;
  } catch {
    /* not JSON: fall back to the columns */
  }
  if (r.order_id === null || r.user_id === null || r.voucher_id === null) return null;
  const fallback = orderMessageSchema.safeParse({ v: 1, orderId: String(r.order_id), userId: String(r.user_id), voucherId: String(r.voucher_id), at: r.create_time.getTime() });
  return fallback.success ? fallback.data : null;
}

function assertDeadLetterAccess(actor: Actor, r: DeadLetterRow): void {
  // A message without a known voucher belongs to no shop: only an admin may act on it.
  assertOwns(actor, r.owner_id === null ? null : String(r.owner_id), '该死信');
}

export interface DeadLetterDecision {
  id: string;
  status: DeadLetterStatus;
  /** False when the row was already decided (replayed or discarded before): nothing was done. */
  changed: boolean;
}

export async function replayDeadLetter(db: DB, actor: Actor, id: string): Promise<DeadLetterDecision> {
  return db.transaction().execute(async (trx) => {
    const row = await lockDeadLetterRow(trx, id);
    if (!row) throw notFound('死信');
    assertDeadLetterAccess(actor, row);
    if (row.status !== 'dead') return { id, status: row.status, changed: false };
    const msg = messageOf(row);
    if (!msg) throw new AppError('CONFLICT', '该消息无法解析，不能重放，只能丢弃');
    // Publish, then mark: if the commit fails the row stays "dead" and a second replay publishes
    // a duplicate the worker absorbs. Marking first could lose the message for good.
    await publishOrder(msg);
    await setDeadLetterStatus(trx, id, 'replayed');
    await recordAudit(trx, { actorId: actor.id, action: 'dead-letter.replay', targetType: 'dead-letter', targetId: id, before: { status: 'dead' }, after: { status: 'replayed', orderId: msg.orderId } });
    return { id, status: 'replayed', changed: true };
  });
}

export async function discardDeadLetter(db: DB, actor: Actor, id: string): Promise<DeadLetterDecision> {
  return db.transaction().execute(async (trx) => {
    const row = await lockDeadLetterRow(trx, id);
    if (!row) throw notFound('死信');
    assertDeadLetterAccess(actor, row);
    if (row.status !== 'dead') return { id, status: row.status, changed: false };
    // A copy that was still in flight may have written the order: then there is nothing to discard.
    if (row.order_id !== null && (await orderIsPersisted(trx, String(row.order_id)))) {
      throw new AppError('CONFLICT', '该订单已经成功入库，无需丢弃');
    }
    await setDeadLetterStatus(trx, id, 'discarded');
    await recordAudit(trx, { actorId: actor.id, action: 'dead-letter.discard', targetType: 'dead-letter', targetId: id, before: { status: 'dead', reason: row.reason }, after: { status: 'discarded' } });
    return { id, status: 'discarded', changed: true };
  });
}

const REPLAY_ALL_MAX = 1000;

/**
 * Replays every waiting dead letter the actor may see (oldest first, at most 1000 per call).
 * Unparseable ones are skipped (discard them); a broker outage stops the run with what was done.
 */
export async function replayAllDeadLetters(db: DB, actor: Actor): Promise<{ replayed: number; skipped: number; remaining: number }> {
  const ownerId = ownerScope(actor);
  let replayed = 0;
  let skipped = 0;
  let afterId: string | undefined;
  while (replayed + skipped < REPLAY_ALL_MAX) {
    const batch = await listDeadLetterRows(db, { ownerId, status: 'dead', afterId: afterId ?? '0', limit: 100 });
    if (batch.length === 0) break;
    for (const r of batch) {
      afterId = String(r.id);
      try {
        const d = await replayDeadLetter(db, actor, afterId);
        if (d.changed) replayed++;
      } catch (e) {
        if (e instanceof AppError && e.code === 'CONFLICT') {
          skipped++;
          continue;
        }
        log.error({ err: e, deadLetterId: afterId }, 'replay-all stopped');
        throw new AppError('SERVICE_UNAVAILABLE', `已重放 ${replayed} 条，之后重放失败（消息队列不可用？），请稍后重试`);
      }
    }
  }
  const remaining = await countDeadLetters(db, { ownerId, status: 'dead' });
  return { replayed, skipped, remaining };
}
