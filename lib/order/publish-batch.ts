/**
 * The grab path's publisher: the grab answers as soon as the Lua script has put the order in the
 * Redis outbox, and the order messages accepted in one event-loop turn are published together
 * right after (one socket write, confirms awaited in the background). Waiting for each broker
 * confirm before answering added a broker round trip to every accepted grab for no guarantee:
 * an order whose publish fails, or is never attempted, stays in the outbox and the sweeper
 * republishes it (OUTBOX_STALE_MS later).
 *
 * Bounded: above MAX_UNCONFIRMED messages awaiting their confirm (a slow or absent broker), new
 * orders are left to the sweeper instead of piling up in this process's memory.
 */
import { log } from '@/lib/log';
import type { OrderMessage } from '@/lib/order/message';
import { publishOrder } from '@/lib/order/publish';

export const MAX_UNCONFIRMED = 20_000;

let queued: OrderMessage[] = [];
let unconfirmed = 0;
let skipped = 0;
let lastWarn = 0;

export function publishSoon(msg: OrderMessage): void {
  if (unconfirmed + queued.length >= MAX_UNCONFIRMED) {
    skipped++;
    if (Date.now() - lastWarn > 5000) {
      lastWarn = Date.now();
      log.warn({ skipped, unconfirmed }, 'order publishes backed up; new orders wait in the outbox for the sweeper');
    }
    return;
  }
  queued.push(msg);
  if (queued.length === 1) setImmediate(flush);
}

function flush(): void {
  const batch = queued;
  queued = [];
  unconfirmed += batch.length;
  for (const msg of batch) {
    publishOrder(msg)
      .catch((err: unknown) =>
        log.warn({ orderId: msg.orderId, voucherId: msg.voucherId, err: err instanceof Error ? err.message : String(err) }, 'order publish failed; it stays in the outbox for the sweeper'),
      )
      .finally(() => unconfirmed--);
  }
}

/** For tests and shutdown: resolves once every publish started so far has been confirmed or failed. */
export async function publishesSettled(timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((queued.length > 0 || unconfirmed > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
