/**
 * A sale for the Redis-loss fault cases (failover.ts, redis-restart.ts): a fresh voucher and users
 * with sessions, then the verdict once Redis has lost what it lost — which grabs answered 200 it
 * forgot, whether every 200 ended persisted or dead-lettered and its buyer reads `created` or
 * `failed`, and whether the invariants hold again after the product's own repair (the worker's
 * lib/seckill/repair.ts; the test repairs nothing).
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { waitFor } from './procs';
import type { Storm, StormUser } from './storm';

/** `stock` defaults to twice the users: the sale never sells out, so grabs are in flight whenever the fault lands. `room`: a room sale at that proof-of-work cost. */
export async function createSale(db: DB, redis: RedisClient, users: number, phonePrefix: string, buckets = 1, stock = users * 2, room?: { powCost: number }): Promise<{ voucherId: string; users: StormUser[] }> {
  const { createSession } = await import('@/lib/auth/session');
  const { preheatVoucher } = await import('@/lib/seckill/preheat');
  const shop = await db.selectFrom('tb_shop').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  const ins = await db.insertInto('tb_voucher').values({ shop_id: shop.id, title: `Redis 故障 ${Date.now()}`, pay_value: 100, actual_value: 1000, type: 1 }).executeTakeFirstOrThrow();
  const voucherId = String(ins.insertId);
  await db.insertInto('tb_seckill_voucher').values({ voucher_id: voucherId, initial_stock: stock, stock, buckets, begin_time: new Date(Date.now() - 60_000), end_time: new Date(Date.now() + 3600_000) }).execute();
  // A merchant's room sale (docs/fair-sale.md#the-waiting-room): the room row before the preheat writes the meta's flag.
  if (room) await (await import('@/lib/seckill/room/room.repository')).insertRoom(db, { voucherId, powCost: room.powCost });
  await preheatVoucher(db, redis, voucherId);
  const phones = Array.from({ length: users }, (_, i) => `${phonePrefix}${String(i).padStart(11 - phonePrefix.length, '0')}`);
  await db.insertInto('tb_user').ignore().values(phones.map((phone) => ({ phone, nick_name: `f_${phone.slice(-6)}`, password: null }))).execute();
  const out: StormUser[] = [];
  for (const u of await db.selectFrom('tb_user').select(['id', 'nick_name']).where('phone', 'in', phones).execute()) {
    out.push({ id: u.id, token: await createSession(redis, { id: u.id, nickName: u.nick_name, icon: '', role: 'user' }) });
  }
  return { voucherId, users: out };
}

/** The buyers Redis knows right now (every stock bucket's): take it right after the fault, before the worker's repair. */
export async function snapshotBuyers(redis: RedisClient, voucherId: string, buckets = 1): Promise<Set<string>> {
  const { keys } = await import('@/lib/redis/keys');
  const { bucketTags } = await import('@/lib/seckill/buckets/tags');
  const sets = await Promise.all(bucketTags(voucherId, buckets).map((t) => redis.smembers(keys.seckillBuyers(t))));
  return new Set(sets.flat());
}

/**
 * Grabs answered 200 that Redis forgot: buyers answered 200 before the fault who are not in the
 * buyers set right after it (`known`, a snapshot taken before any repair), and buyers answered
 * 200 twice (the first grab forgotten, the second accepted).
 */
export function countForgotten(known: Set<string>, storm: Storm, beforeFault: (phase: string) => boolean): { notKnown: number; twice: number } {
  const perUser = new Map<string, number>();
  for (const x of storm.answers) perUser.set(x.userId, (perUser.get(x.userId) ?? 0) + 1);
  const early = new Set(storm.answers.filter((x) => beforeFault(x.phase)).map((x) => x.userId));
  return { notKnown: [...early].filter((u) => !known.has(u)).length, twice: [...perUser.values()].filter((n) => n > 1).length };
}

export interface Verdict {
  accepted: number;
  persisted: number;
  failed: number;
  silent: number;
  oversold: number;
  duplicates: number;
  consistent: boolean;
  /** Seconds from the end of the storm until the invariants held (the product's repair), or NaN. */
  repairedAfterS: number;
  /** 200s whose buyer reads `created` / `failed` on GET /api/orders/{id} within the bound. */
  created: number;
  failedSeen: number;
  /** 200s whose buyer never saw created/failed: 404 for a folded duplicate, 404 otherwise, other. */
  notVisible: { folded404: number; other404: number; other: number };
  summary: string;
}

/** How long the product gets to repair itself and to show every 200 to its buyer. */
export const REPAIR_BOUND_MS = 60_000;

/**
 * Waits for every 200 to be persisted or dead-lettered, then — with no repair from the test — for
 * the invariants to hold again (the worker's lib/seckill/repair.ts must do it within
 * REPAIR_BOUND_MS), and for every 200 to read `created` or `failed` to its buyer.
 */
export async function settle(db: DB, redis: RedisClient, voucherId: string, storm: Storm, web: string): Promise<Verdict> {
  const { readSeckillState } = await import('@/lib/seckill/state');
  const { createSession } = await import('@/lib/auth/session');
  const answers = storm.answers;
  const ids = answers.map((x) => x.orderId);
  const inDb = async () => new Set((await db.selectFrom('tb_voucher_order').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
  // Failed for the buyer: dead-lettered, or recorded in tb_order_failure (a folded duplicate, a voided unconfirmed grab).
  const dead = async () => {
    const [letters, failures] = await Promise.all([
      db.selectFrom('tb_order_dead_letter').select('order_id').where('order_id', 'in', ids).execute(),
      db.selectFrom('tb_order_failure').select('order_id').where('order_id', 'in', ids).execute(),
    ]);
    return new Set([...letters.map((r) => r.order_id!), ...failures.map((r) => r.order_id)]);
  };
  const t0 = Date.now();
  await waitFor('every 200 persisted or recorded as failed', async () => {
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
  // No repair here: the worker notices the restart / failover and rebuilds the sale by itself.
  const consistent = await waitFor('invariants after the product’s repair', async () => holds(await numbers()), Math.max(1000, REPAIR_BOUND_MS - (Date.now() - t0)), 500).then(() => true, () => false);
  const repairedAfterS = consistent ? (Date.now() - t0) / 1000 : NaN;
  const { r, sv, orders } = await numbers();
  const dup = await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).groupBy('user_id').having((eb) => eb.fn.countAll(), '>', 1).execute();

  // A buyer answered 200 twice ends with one order (unique user + voucher): their other id folds into it.
  const perUser = new Map<string, number>();
  for (const x of answers) perUser.set(x.userId, (perUser.get(x.userId) ?? 0) + 1);
  const owners = new Set((await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).execute()).map((x) => x.user_id));
  const silent = answers.filter((x) => !persisted.has(x.orderId) && !failed.has(x.orderId) && !(perUser.get(x.userId)! > 1 && owners.has(x.userId))).length;

  // Every 200 visible to its buyer: GET /api/orders/{id} says created or failed, not 404, not pending forever.
  const tokens = new Map(storm.users.map((u) => [u.id, u.token]));
  const seen = new Map<string, number | string>();
  const look = async (x: (typeof answers)[number]) => {
    const res = await fetch(`${web}/api/orders/${x.orderId}`, { headers: { authorization: `Bearer ${tokens.get(x.userId)}` }, signal: AbortSignal.timeout(5000) });
    if (res.status === 401) {
      // A Redis that forgot everything forgot the sessions too: the buyer logs in again.
      tokens.set(x.userId, await createSession(redis, { id: x.userId, nickName: 'buyer', icon: '', role: 'user' }));
      return;
    }
    const body = (await res.json().catch(() => null)) as { data?: { state?: string } } | null;
    seen.set(x.orderId, res.ok ? (body?.data?.state ?? '?') : res.status);
  };
  const final = (v: number | string | undefined) => v === 'created' || v === 'failed';
  const deadline = t0 + REPAIR_BOUND_MS + 30_000;
  for (;;) {
    const todo = answers.filter((x) => !final(seen.get(x.orderId)));
    for (let i = 0; i < todo.length; i += 16) await Promise.all(todo.slice(i, i + 16).map((x) => look(x).catch(() => undefined)));
    if (answers.every((x) => final(seen.get(x.orderId))) || Date.now() > deadline) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  const notVisible = { folded404: 0, other404: 0, other: 0 };
  for (const x of answers) {
    const v = seen.get(x.orderId);
    if (final(v)) continue;
    if (v === 404 && perUser.get(x.userId)! > 1 && owners.has(x.userId)) notVisible.folded404++;
    else if (v === 404) notVisible.other404++;
    else notVisible.other++;
  }
  const states = [...seen.values()];
  return {
    accepted: answers.length,
    persisted: persisted.size,
    failed: failed.size,
    silent,
    oversold: Math.max(0, orders - sv.initial_stock) + (sv.stock < 0 ? 1 : 0) + (r.remaining < 0 ? 1 : 0),
    duplicates: dup.length,
    consistent,
    repairedAfterS,
    created: states.filter((v) => v === 'created').length,
    failedSeen: states.filter((v) => v === 'failed').length,
    notVisible,
    summary: `initial ${sv.initial_stock}, redis remaining ${r.remaining}, buyers ${r.buyers}, pending ${r.pending}, db stock ${sv.stock}, db orders ${orders}`,
  };
}

const invisible = (v: Verdict) => v.notVisible.folded404 + v.notVisible.other404 + v.notVisible.other;
export const visibility = (v: Verdict) =>
  `buyers see created ${v.created}, failed ${v.failedSeen}, not visible ${invisible(v)} (404 folded duplicate ${v.notVisible.folded404}, 404 other ${v.notVisible.other404}, other ${v.notVisible.other})`;

export const passed = (v: Verdict) => v.oversold === 0 && v.duplicates === 0 && v.silent === 0 && v.consistent && v.accepted > 0 && invisible(v) === 0;
