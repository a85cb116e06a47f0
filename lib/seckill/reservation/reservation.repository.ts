/** SQL for tb_seckill_gate and tb_seckill_reservation (docs/fair-sale.md). */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

export const GateMode = { FIRST_COME: 1, DRAW: 2 } as const;
export type GateModeValue = (typeof GateMode)[keyof typeof GateMode];

export interface GateRow {
  voucherId: string;
  mode: GateModeValue;
  reserveBegin: Date;
  seed: string;
  seedHash: string;
  drawnTime: Date | null;
  reserved: number | null;
  winners: number | null;
}

const gateColumns = ['voucher_id', 'mode', 'reserve_begin', 'seed', 'seed_hash', 'drawn_time', 'reserved', 'winners'] as const;

function toGate(r: { voucher_id: string; mode: number; reserve_begin: Date; seed: string; seed_hash: string; drawn_time: Date | null; reserved: number | null; winners: number | null }): GateRow {
  return {
    voucherId: r.voucher_id,
    mode: r.mode as GateModeValue,
    reserveBegin: r.reserve_begin,
    seed: r.seed,
    seedHash: r.seed_hash,
    drawnTime: r.drawn_time,
    reserved: r.reserved === null ? null : Number(r.reserved),
    winners: r.winners === null ? null : Number(r.winners),
  };
}

/** `lock`: 'update' serializes with the draw and rebuilds; 'share' lets reservations run side by side. */
export async function findGate(db: Executor, voucherId: string, lock?: 'update' | 'share'): Promise<GateRow | undefined> {
  let q = db.selectFrom('tb_seckill_gate').select(gateColumns).where('voucher_id', '=', voucherId);
  if (lock === 'update') q = q.forUpdate();
  // MariaDB has no FOR SHARE.
  if (lock === 'share') q = q.modifyEnd(sql`lock in share mode`);
  const row = await q.executeTakeFirst();
  return row && toGate(row);
}

export async function insertGate(trx: Executor, g: { voucherId: string; mode: GateModeValue; reserveBegin: Date; seed: string; seedHash: string }): Promise<void> {
  await trx
    .insertInto('tb_seckill_gate')
    .values({ voucher_id: g.voucherId, mode: g.mode, reserve_begin: g.reserveBegin, seed: g.seed, seed_hash: g.seedHash })
    .execute();
}

/** True when this call created the reservation (false: the user already held one). */
export async function insertReservation(trx: Executor, voucherId: string, userId: string): Promise<boolean> {
  const r = await trx.insertInto('tb_seckill_reservation').ignore().values({ voucher_id: voucherId, user_id: userId }).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deleteReservation(trx: Executor, voucherId: string, userId: string): Promise<boolean> {
  const r = await trx.deleteFrom('tb_seckill_reservation').where('voucher_id', '=', voucherId).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function findReservation(db: Executor, voucherId: string, userId: string): Promise<{ won: number | null } | undefined> {
  return db.selectFrom('tb_seckill_reservation').select('won').where('voucher_id', '=', voucherId).where('user_id', '=', userId).executeTakeFirst();
}

export async function countReservations(db: Executor, voucherId: string): Promise<number> {
  const r = await db.selectFrom('tb_seckill_reservation').select(sql<string>`COUNT(*)`.as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Reserved user ids (or only the drawn ones), in id pages: a sale can have many. */
export async function* reservedIdPages(db: Executor, voucherId: string, onlyWon = false, pageSize = 5000): AsyncGenerator<string[]> {
  let after = '0';
  for (;;) {
    let q = db
      .selectFrom('tb_seckill_reservation')
      .select('user_id')
      .where('voucher_id', '=', voucherId)
      .where(sql<boolean>`user_id > ${after}`);
    if (onlyWon) q = q.where('won', '=', 1);
    const rows = await q.orderBy('user_id').limit(pageSize).execute();
    if (rows.length === 0) return;
    yield rows.map((r) => r.user_id);
    after = rows[rows.length - 1]!.user_id;
    if (rows.length < pageSize) return;
  }
}

/** Records the draw: winners get won = 1, everyone else won = 0, and the gate row says it ran. */
export async function recordDraw(trx: Executor, voucherId: string, winners: string[], reserved: number, at: Date): Promise<void> {
  await trx.updateTable('tb_seckill_reservation').set({ won: 0 }).where('voucher_id', '=', voucherId).execute();
  for (let i = 0; i < winners.length; i += 1000) {
    await trx
      .updateTable('tb_seckill_reservation')
      .set({ won: 1 })
      .where('voucher_id', '=', voucherId)
      .where('user_id', 'in', winners.slice(i, i + 1000))
      .execute();
  }
  await trx.updateTable('tb_seckill_gate').set({ drawn_time: at, reserved, winners: winners.length }).where('voucher_id', '=', voucherId).execute();
}

/** Reservations made per minute (live ones: a cancel removes its row), oldest first. */
export async function reservationsPerMinute(db: Executor, voucherId: string): Promise<{ minute: Date; n: number }[]> {
  const rows = await db
    .selectFrom('tb_seckill_reservation')
    .select([sql<Date>`MIN(create_time)`.as('first'), sql<string>`COUNT(*)`.as('n')])
    .where('voucher_id', '=', voucherId)
    .groupBy(sql`DATE_FORMAT(create_time, '%Y-%m-%d %H:%i')`)
    .orderBy(sql`DATE_FORMAT(create_time, '%Y-%m-%d %H:%i')`)
    .execute();
  return rows.map((r) => {
    const m = new Date(r.first);
    m.setUTCSeconds(0, 0);
    return { minute: m, n: Number(r.n) };
  });
}

/** Drawn users by id, for the console's list (bounded). */
export async function drawnUsers(db: Executor, voucherId: string, limit: number): Promise<{ userId: string; nickName: string }[]> {
  const rows = await db
    .selectFrom('tb_seckill_reservation as r')
    .innerJoin('tb_user as u', 'u.id', 'r.user_id')
    .select(['r.user_id', 'u.nick_name'])
    .where('r.voucher_id', '=', voucherId)
    .where('r.won', '=', 1)
    .orderBy('r.user_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ userId: r.user_id, nickName: r.nick_name }));
}
