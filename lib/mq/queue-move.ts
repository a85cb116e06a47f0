/**
 * Moves the messages of a queue that must go (a classic queue of an earlier version) into the
 * queue that replaces it, then deletes it (docs/rabbitmq.md#moving-the-classic-timeout-queues).
 *
 * A queue's type cannot change under its name (declaring it again with another `x-queue-type` is
 * refused, 406 PRECONDITION_FAILED), so the quorum replacement has a new name and the old queue
 * is emptied message by message by one exclusive consumer: delivery → publish into the new queue,
 * wait for the broker's confirm → ack the old copy. A crash between the confirm and the ack leaves the
 * message in both queues (at least once; the consumers here are idempotent), never in neither.
 * The old queue is deleted only with `if-empty` and `if-unused`: while a process of the earlier
 * version still consumes it (then the exclusive consumer is refused) or publishes into it, it
 * stays, and the next run moves what came since.
 *
 * Safe to run from every process at once, as often as you like: the consumer is exclusive, so one
 * mover at a time works on a queue (the others are refused and leave it), a queue already gone is
 * "nothing to do", and the delete runs only after the mover's every message is confirmed and acked.
 */
import type { Channel, ChannelModel, Message, Options } from 'amqplib';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { publishConfirmed } from '@/lib/mq/confirm';
import { names } from '@/lib/mq/topology';

const CONFIRM_TIMEOUT_MS = 10_000;
const MOVE_PREFETCH = 100;

export interface MoveTarget {
  exchange: string;
  routingKey: string;
  /** Properties of the copy; by default the original's. */
  options?: Options.Publish;
}

export interface MoveResult {
  /** The old queue was not there (already moved, or never existed): nothing was done. */
  absent: boolean;
  moved: number;
  /** The old queue was deleted by this run. */
  deleted: boolean;
  /** Why it was left in place: it has consumers, or messages arrived during the run. */
  kept?: string;
}

/** The properties amqplib hands back, as publish options (undefined ones dropped). */
export function publishOptionsOf(m: Message): Options.Publish {
  const p = m.properties;
  const o: Options.Publish = {
    contentType: p.contentType,
    contentEncoding: p.contentEncoding,
    headers: p.headers,
    deliveryMode: p.deliveryMode ?? 2,
    priority: p.priority,
    correlationId: p.correlationId,
    replyTo: p.replyTo,
    expiration: p.expiration,
    messageId: p.messageId,
    timestamp: p.timestamp,
    type: p.type,
    appId: p.appId,
  };
  for (const k of Object.keys(o) as (keyof Options.Publish)[]) if (o[k] === undefined) delete o[k];
  return o;
}

async function withChannel<T>(conn: ChannelModel, fn: (ch: Channel) => Promise<T>): Promise<T> {
  const ch = await conn.createChannel();
  ch.on('error', () => {}); // a refused passive declare or delete closes the channel; the caller sees the rejection
  try {
    return await fn(ch);
  } finally {
    await ch.close().catch(() => {});
  }
}

/** AMQP 404 NOT_FOUND for a queue that does not exist (not one whose home node is down: that is retried later). */
function isNoQueue(err: unknown): boolean {
  const e = err as { code?: number; message?: string };
  return e.code === 404 && !/home node|is down/i.test(e.message ?? '');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function moveQueue(conn: ChannelModel, from: string, target: (m: Message) => MoveTarget): Promise<MoveResult> {
  try {
    await withChannel(conn, (ch) => ch.checkQueue(from));
  } catch (err) {
    if (isNoQueue(err)) return { absent: true, moved: 0, deleted: false };
    throw err;
  }
  let moved = 0;
  let failed: Error | undefined;
  const inFlight = new Set<Promise<void>>();
  const ch = await conn.createConfirmChannel();
  ch.on('error', () => {});
  try {
    await ch.prefetch(MOVE_PREFETCH);
    // An exclusive consumer, not basic.get: it is the movers' lock. With basic.get, a mover that
    // found the queue empty could delete it (if-empty counts only ready messages) while another
    // still held one unacked, and that message would go with the queue.
    let tag: string;
    try {
      tag = (
        await ch.consume(
          from,
          (m) => {
            if (!m || failed) return;
            const p = (async () => {
              const t = target(m);
              try {
                await publishConfirmed(ch, t.exchange, t.routingKey, m.content, t.options ?? publishOptionsOf(m), CONFIRM_TIMEOUT_MS);
                ch.ack(m);
                moved++;
              } catch (err) {
                // Not confirmed: the original stays (on a closed channel the broker requeues it).
                failed ??= err as Error;
                try {
                  ch.nack(m, false, true);
                } catch {
                  /* channel gone: requeued by the broker */
                }
              }
            })().finally(() => inFlight.delete(p));
            inFlight.add(p);
          },
          { exclusive: true },
        )
      ).consumerTag;
    } catch (err) {
      // 403 ACCESS_REFUSED: another mover, or a consumer of the earlier version, is on it.
      return { absent: false, moved: 0, deleted: false, kept: (err as Error).message };
    }
    // Done when nothing is in flight and nothing is ready (checkQueue counts ready messages).
    for (;;) {
      if (failed) throw failed;
      if (inFlight.size === 0 && (await withChannel(conn, (c) => c.checkQueue(from))).messageCount === 0) break;
      await sleep(50);
    }
    await ch.cancel(tag);
    await Promise.all([...inFlight]);
    if (failed) throw failed;
  } finally {
    await ch.close().catch(() => {});
  }
  try {
    await withChannel(conn, (c) => c.deleteQueue(from, { ifEmpty: true, ifUnused: true }));
    return { absent: false, moved, deleted: true };
  } catch (err) {
    // Another mover deleted it first: done. In use or not empty (406): the next run goes on.
    if (isNoQueue(err)) return { absent: false, moved, deleted: false };
    return { absent: false, moved, deleted: false, kept: (err as Error).message };
  }
}

/**
 * What is left of a timeout message's payment window, for its copy in the new delay queue. New
 * messages carry their deadline (`x-deadline`, ms since epoch). One of an earlier version does
 * not; its `expiration` (what was left when it was published) is an upper bound, so its copy
 * fires at most one window late, never early: the SQL backstop cancels the order on time anyway.
 */
export function remainingTtl(m: Message, windowMs: number, now = Date.now()): number {
  const deadline = Number(m.properties.headers?.['x-deadline']);
  if (Number.isFinite(deadline) && deadline > 0) return Math.max(0, Math.min(windowMs, deadline - now));
  const exp = Number(m.properties.expiration);
  return Number.isFinite(exp) && exp >= 0 ? Math.min(windowMs, exp) : windowMs;
}

/**
 * The classic payment-timeout queues of earlier versions → the quorum ones (lib/mq/topology.ts
 * `names`). The new queues must be declared first. Messages of the old timeout queue (already
 * due) go to the new timeout queue; those of the old delay queue go to the new delay queue with
 * what is left of their window. Never throws: a failure is logged and the next run resumes.
 */
export async function moveLegacyTimeoutQueues(conn: ChannelModel, delayMs = env.ORDER_PAY_TIMEOUT_SECONDS * 1000): Promise<MoveResult[]> {
  const results: MoveResult[] = [];
  try {
    results.push(
      await moveQueue(conn, names.legacyTimeoutDelayQueue(delayMs), (m) => ({
        exchange: '',
        routingKey: names.timeoutDelayQueue(delayMs),
        options: { ...publishOptionsOf(m), expiration: String(remainingTtl(m, delayMs)) },
      })),
    );
    results.push(
      await moveQueue(conn, names.legacyTimeoutQueue, (m) => {
        const { expiration: _gone, ...options } = publishOptionsOf(m);
        // Straight into the new queue, not through the timeout exchange: the old queue is still
        // bound there and would get its own message back.
        return { exchange: '', routingKey: names.timeoutQueue, options };
      }),
    );
    const moved = results.reduce((a, r) => a + r.moved, 0);
    if (moved > 0 || results.some((r) => r.deleted || r.kept)) log.info({ results }, 'classic payment-timeout queues moved into the quorum ones');
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'moving the classic payment-timeout queues failed; the next run resumes');
  }
  return results;
}
