/** Aggregates over a voucher's orders for the live stock chart. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

/** Orders per bucket of acceptance time (create_time is when Redis accepted the grab; for an order written more than 10 s late, the write: payableFrom in lib/order/persist.ts). */
export async function orderBuckets(db: Executor, voucherId: string, fromMs: number, bucketSec: number): Promise<Map<number, number>> {
  const bucket = sql<number>`FLOOR((UNIX_TIMESTAMP(create_time) - ${fromMs / 1000}) / ${bucketSec})`;
  const rows = await db
    .selectFrom('tb_voucher_order')
    .select([bucket.as('b'), (eb) => eb.fn.countAll<string>().as('n')])
    .where('voucher_id', '=', voucherId)
    .where('create_time', '>=', new Date(fromMs))
    .groupBy('b')
    .execute();
  return new Map(rows.map((r) => [Number(r.b), Number(r.n)]));
}

export async function orderTimeRange(db: Executor, voucherId: string): Promise<{ first: Date; last: Date } | null> {
  const row = await db
    .selectFrom('tb_voucher_order')
    .select((eb) => [eb.fn.min('create_time').as('first'), eb.fn.max('create_time').as('last')])
    .where('voucher_id', '=', voucherId)
    .executeTakeFirst();
  return row?.first && row.last ? { first: new Date(row.first), last: new Date(row.last) } : null;
}
