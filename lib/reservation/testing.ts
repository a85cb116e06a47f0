/** Fixtures for the reservation tests: a gated sale (optionally with a chosen seed), and starting it now. */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { createTestVoucher } from '@/lib/seckill/testing';
import { gateSale, type ReservationModeName } from '@/lib/reservation/reservation';
import { seedHash } from '@/lib/reservation/draw';

export async function createGatedVoucher(
  db: DB,
  redis: RedisClient,
  o: { stock: number; mode: ReservationModeName; seed?: string; startsInMs?: number },
): Promise<string> {
  const id = await createTestVoucher(db, redis, { stock: o.stock, startsInMs: o.startsInMs ?? 3_600_000, endsInMs: 7_200_000, preheat: false });
  await db.transaction().execute((trx) => gateSale(trx, id, o.mode, new Date(Date.now() - 60_000)));
  if (o.seed) await db.updateTable('tb_seckill_gate').set({ seed: o.seed, seed_hash: seedHash(o.seed) }).where('voucher_id', '=', id).execute();
  await preheatVoucher(db, redis, id);
  return id;
}

/** Moves the sale's start to just now (MySQL, then Redis by a preheat), as if the clock had reached it. */
export async function startSaleNow(db: DB, redis: RedisClient, voucherId: string): Promise<void> {
  await db.updateTable('tb_seckill_voucher').set({ begin_time: new Date(Date.now() - 1) }).where('voucher_id', '=', voucherId).execute();
  await preheatVoucher(db, redis, voucherId);
}

/** Deletes every Redis key of the sale (`seckill:{vid}:*`): a Redis that lost them. */
export async function forgetSaleKeys(redis: RedisClient, voucherId: string): Promise<number> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `seckill:{${voucherId}}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  for (const k of found) await redis.del(k);
  return found.length;
}
