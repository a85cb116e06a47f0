/**
 * A sale for the Redis-loss fault cases (failover.ts, redis-restart.ts): a fresh voucher and users
 * with sessions, then the verdict once Redis has lost what it lost — which grabs answered 200 it
 * forgot, whether every 200 ended persisted or dead-lettered (its buyer then reads `failed`), and
 * whether the invariants hold again after the repair (preheat from MySQL).
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { waitFor } from './procs';
import type { Storm, StormUser } from './storm';

export async function createSale(db: DB, redis: RedisClient, users: number, phonePrefix: string): Promise<{ voucherId: string; users: StormUser[] }> {
  const { createSession } = await import('@/lib/auth/session');
  const { preheatVoucher } = await import('@/lib/seckill/preheat');
  const stock = users * 2; // never sells out: grabs are in flight whenever the fault lands
  const shop = await db.selectFrom('tb_shop').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  const ins = await db.insertInto('tb_voucher').values({ shop_id: shop.id, title: `Redis 故障 ${Date.now()}`, pay_value: 100, actual_value: 1000, type: 1 }).executeTakeFirstOrThrow();
  const voucherId = String(ins.insertId);
  await db.insertInto('tb_seckill_voucher').values({ voucher_id: voucherId, initial_stock: stock, stock, begin_time: new Date(Date.now() - 60_000), end_time: new Date(Date.now() + 3600_000) }).execute();
  await preheatVoucher(db, redis, voucherId);
  const phones = Array.from({ length: users }, (_, i) => `${phonePrefix}${String(i).padStart(11 - phonePrefix.length, '0')}`);
  await db.insertInto('tb_user').ignore().values(phones.map((phone) => ({ phone, nick_name: `f_${phone.slice(-6)}`, password: null }))).execute();
  const out: StormUser[] = [];
  for (const u of await db.selectFrom('tb_user').select(['id', 'nick_name']).where('phone', 'in', phones).execute()) {
    out.push({ id: u.id, token: await createSession(redis, { id: u.id, nickName: u.nick_name, icon: '', role: 'user' }) });
  }
  return { voucherId, users: out };
}

/**
 * Buyers answered 200 that Redis no longer knows: not in the buyers set, or answered 200 twice
 * (the first grab forgotten, the second accepted). Call before any repair.
 */
export async function countForgotten(redis: RedisClient, voucherId: string, storm: Storm): Promise<{ notKnown: number; twice: number }> {
  const { keys } = await import('@/lib/redis/keys');
  const buyers = new Set(await redis.smembers(keys.seckillBuyers(voucherId)));
  const perUser = new Map<string, number>();
  for (const x of storm.answers) perUser.set(x.userId, (perUser.get(x.userId) ?? 0) + 1);
  return { notKnown: [...perUser.keys()].filter((u) => !buyers.has(u)).length, twice: [...perUser.values()].filter((n) => n > 1).length };
}

export interface Verdict {
  accepted: number;
  persisted: number;
  failed: number;
  silent: number;
  oversold: number;
  duplicates: number;
  consistent: boolean;
  summary: string;
}

/** Waits for every 200 to be persisted or dead-lettered, repairs, waits for the invariants. */
export async function settle(db: DB, redis: RedisClient, voucherId: string, storm: Storm): Promise<Verdict> {
  const { preheatVoucher } = await import('@/lib/seckill/preheat');
  const { readSeckillState } = await import('@/lib/seckill/state');
  const answers = storm.answers;
  const ids = answers.map((x) => x.orderId);
  const inDb = async () => new Set((await db.selectFrom('tb_voucher_order').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
  const dead = async () => new Set((await db.selectFrom('tb_order_dead_letter').select('order_id').where('order_id', 'in', ids).execute()).map((r) => r.order_id!));
  await waitFor('every 200 persisted or dead-lettered', async () => {
    const [p, d] = await Promise.all([inDb(), dead()]);
    return ids.every((id) => p.has(id) || d.has(id));
  }, 120_000, 500).catch(() => undefined);
  const [persisted, failed] = await Promise.all([inDb(), dead()]);

  const numbers = async () => {
    const r = (await readSeckillState(redis, voucherId))!;
    const sv = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
    const orders = Number((await db.selectFrom('tb_voucher_order').select((eb) => eb.fn.countAll<number>().as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow()).n);
    return { r, sv, orders };
  };
  const holds = ({ r, sv, orders }: Awaited<ReturnType<typeof numbers>>) =>
    r.pending === 0 && r.buyers === orders && r.remaining + r.buyers === sv.initial_stock && sv.stock + orders === sv.initial_stock;
  // The repair rebuilds Redis from MySQL (buyers unioned in, stock recomputed); the grabs that were
  // in flight without an answer drain meanwhile.
  await preheatVoucher(db, redis, voucherId);
  const consistent = await waitFor('invariants after the repair', async () => holds(await numbers()), 120_000, 500).then(() => true, () => false);
  const { r, sv, orders } = await numbers();
  const dup = await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).groupBy('user_id').having((eb) => eb.fn.countAll(), '>', 1).execute();

  // A buyer answered 200 twice ends with one order (unique user + voucher): their other id folds into it.
  const perUser = new Map<string, number>();
  for (const x of answers) perUser.set(x.userId, (perUser.get(x.userId) ?? 0) + 1);
  const owners = new Set((await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).execute()).map((x) => x.user_id));
  const silent = answers.filter((x) => !persisted.has(x.orderId) && !failed.has(x.orderId) && !(perUser.get(x.userId)! > 1 && owners.has(x.userId))).length;
  return {
    accepted: answers.length,
    persisted: persisted.size,
    failed: failed.size,
    silent,
    oversold: Math.max(0, orders - sv.initial_stock) + (sv.stock < 0 ? 1 : 0) + (r.remaining < 0 ? 1 : 0),
    duplicates: dup.length,
    consistent,
    summary: `initial ${sv.initial_stock}, redis remaining ${r.remaining}, buyers ${r.buyers}, pending ${r.pending}, db stock ${sv.stock}, db orders ${orders}`,
  };
}

export const passed = (v: Verdict) => v.oversold === 0 && v.duplicates === 0 && v.silent === 0 && v.consistent && v.accepted > 0;
