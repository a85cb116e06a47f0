/** Bench-side state: its own database migrated, its own order queues empty before a run. */
import { createDb, db } from '@/lib/db/client';
import { ensureDatabase, migrateToLatest } from '@/lib/db/migrate';
import { connectMq } from '@/lib/mq/connection';
import { assertTopology, names } from '@/lib/mq/topology';
import { existingOrderIds } from '@/lib/order/order.repository';
import { failedOrderIds } from '@/lib/order/failure.repository';

export async function prepareBenchDb(): Promise<void> {
  await ensureDatabase();
  const migrator = createDb(undefined, 2);
  try {
    await migrateToLatest(migrator);
  } finally {
    await migrator.destroy();
  }
}

/** Leftovers of an aborted run would skew the numbers (the bench prefix belongs to the bench). */
export async function purgeOrderQueue(): Promise<void> {
  const conn = await connectMq();
  try {
    const ch = await conn.createChannel();
    await assertTopology(ch);
    await ch.purgeQueue(names.ordersQueue);
  } finally {
    await conn.close();
  }
}

/**
 * Accepted order ids that are neither in MySQL nor recorded as failed (tb_order_failure: folded into
 * the buyer's other order, and shown to them as failed — an answer, not a loss; an UNCONFIRMED one
 * was answered 503, so it is never among the accepted ids).
 */
export async function missingOrders(orderIds: string[]): Promise<number> {
  let missing = 0;
  for (let i = 0; i < orderIds.length; i += 1000) {
    const chunk = orderIds.slice(i, i + 1000);
    const [found, failed] = await Promise.all([existingOrderIds(db, chunk), failedOrderIds(db, chunk)]);
    missing += chunk.filter((id) => !found.has(id) && !failed.has(id)).length;
  }
  return missing;
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
