/** Bench-side state: its own database migrated, its own order queues empty before a run. */
import { readFileSync, writeFileSync } from 'node:fs';
import { createDb, db } from '@/lib/db/client';
import { ensureDatabase, migrateToLatest } from '@/lib/db/migrate';
import { connectMq } from '@/lib/mq/connection';
import { sql } from 'kysely';
import { env } from '@/lib/env';
import { redis } from '@/lib/redis/client';
import { readSeckillState } from '@/lib/seckill/state';
import { assertTimeoutTopology, assertTopology, names } from '@/lib/mq/topology';
import { existingOrderIds } from '@/lib/seckill/outbox.repository';
import { checkInvariants } from '@/lib/seckill/invariants';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { waitFor } from '@/e2e/support/fixtures/seckill';
import { failedOrderIds } from '@/lib/seckill/failure.repository';

export async function prepareBenchDb(): Promise<void> {
  await ensureDatabase();
  const migrator = createDb(undefined, 2);
  try {
    await migrateToLatest(migrator);
    // Earlier runs' orders are never paid: kept, they time out run after run, and the worker's
    // timeout consumer and SQL backstop cancel hundreds of thousands of them during later runs
    // (measured: accepted grabs/s fell from ~3 500 to ~2 000 over one evening of runs). Every run
    // starts without orders. Only ever on the bench's own database.
    if (!/bench/i.test(new URL(env.DATABASE_URL).pathname)) throw new Error(`refusing to clear orders in ${env.DATABASE_URL}: not a bench database`);
    for (const table of ['tb_voucher_order', 'tb_payment', 'tb_order_failure', 'tb_order_dead_letter']) await sql`TRUNCATE TABLE ${sql.table(table)}`.execute(migrator);
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
    // The payment timeouts of earlier runs' orders (an unpaid bench order is never paid): left
    // alone they pile up in the broker run after run (hundreds of thousands of messages) and slow
    // every later figure down (prepareBenchDb clears the orders they name).
    await assertTimeoutTopology(ch);
    await ch.purgeQueue(names.timeoutQueue);
    await ch.purgeQueue(names.timeoutDelayQueue(env.ORDER_PAY_TIMEOUT_SECONDS * 1000));
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

/**
 * A voucher created a moment ago has no buyers. If Redis says otherwise, the bench's Redis db holds
 * keys of an earlier voucher with the same id (its MySQL database was recreated, or something else
 * uses that db index): preheat only ever adds buyers, so the stale ones would take units and the
 * drain check (orders = buyers) could never hold. Say so instead of waiting for it.
 */
export async function expectFreshVoucher(voucherId: string, stock: number): Promise<void> {
  const s = await readSeckillState(redis, voucherId);
  if (s && s.buyers === 0 && s.remaining === stock) return;
  throw new Error(
    `voucher ${voucherId} was just created but the bench's Redis (db ${new URL(env.REDIS_URL).pathname.slice(1) || '0'}) already holds ${s?.buyers} buyers for it (stale keys of an earlier voucher ${voucherId}); ` +
      `clear the bench's Redis db (redis-cli -n <db> flushdb) or point BENCH_REDIS_URL at an unused one`,
  );
}

/** Waits until every accepted grab of the sale is an order in MySQL (nothing pending, an order per buyer); seconds since `since`. */
export async function waitForDrain(voucherId: string, since: number): Promise<number> {
  await waitFor('the drain', async () => {
    const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
    return s !== null && c !== undefined && s.pending === 0 && c.orders === s.buyers;
  }, 180_000, 100);
  return (Date.now() - since) / 1000;
}

export interface SaleCheck {
  orders: number;
  oversold: number;
  duplicates: number;
  /** Grabs answered 200 without an order in MySQL. */
  lost: number;
  violations: string[];
}

/** A drained sale checked from MySQL and Redis: oversold, duplicates, lost and the invariants (lib/seckill/invariants.ts). */
export async function verifySale(voucherId: string, stock: number, accepted: number): Promise<SaleCheck> {
  const counts = (await dbStockCounts(db, voucherId))!;
  const inv = await checkInvariants(db, redis, voucherId, { drained: true });
  return { orders: counts.orders, oversold: Math.max(0, counts.orders - stock), duplicates: counts.duplicateUsers, lost: Math.max(0, accepted - counts.orders), violations: inv.violations };
}

/**
 * The kernel's queues for connections not yet accepted: raised (never lowered) if this host lets us,
 * by the scenarios that open a connection per request (spike, conn). Raised, they also decide who
 * accepts a lone web process's connections (workers/accept-policy.ts: the process itself rather
 * than the cluster primary's IPC round trip per connection), for the app and the bare server alike.
 */
const KERNEL_QUEUES: Record<string, number> = { 'net/core/somaxconn': 65535, 'net/ipv4/tcp_max_syn_backlog': 65535 };

export function raiseKernelQueues(): string[] {
  return Object.entries(KERNEL_QUEUES).map(([name, want]) => {
    const file = `/proc/sys/${name}`;
    try {
      const have = Number(readFileSync(file, 'utf8').trim());
      if (have >= want) return `${name.split('/').pop()} ${have}`;
      writeFileSync(file, String(want));
      return `${name.split('/').pop()} ${have} → ${want}`;
    } catch {
      return `${name.split('/').pop()} unchanged (not allowed here)`;
    }
  });
}

/**
 * `--known-door off`: the web server without the known-answer door (HOT_KNOWN_DOOR=false,
 * docs/hot-server.md#the-known-answer-door), node:http reading every request: the door's A/B in
 * the scenarios that measure a crowd's connections (conn, spike). Its own row in the table.
 */
export function knownDoorEnv(flag: string | undefined): Record<string, string> {
  if (flag === undefined || flag === 'on') return {};
  if (flag === 'off') return { HOT_KNOWN_DOOR: 'false' };
  throw new Error('--known-door must be on or off');
}
