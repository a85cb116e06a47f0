/**
 * Reservations and the draw (docs/fair-sale.md). MySQL holds the record (tb_seckill_gate,
 * tb_seckill_reservation), Redis the hot state the grab script reads: the reserved set, the
 * winners set and the meta hash's `gate` field, all in the voucher's hash slot.
 *
 * A reserve or a cancel writes MySQL, then the reserved set in Redis, then commits: the Redis write
 * runs while the transaction holds the reservation row's lock, so one user's reserve and cancel
 * sent together reach Redis in the order MySQL commits them, and a Redis that fails rolls the row
 * back (503, nothing done: retry, both are idempotent). Nothing waits for a preheat to make Redis
 * agree with MySQL — no preheat runs between the last reservation and the start.
 */
import type { DB, Executor } from '@/lib/db/client';
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import type { RedisClient } from '@/lib/redis/types';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { AppError, notFound } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { log } from '@/lib/log';
import { drawWinners, newSeed, seedHash } from '@/lib/seckill/reservation/draw';
import {
  countReservations,
  deleteReservation,
  findGate,
  findReservation,
  GateMode,
  insertGate,
  insertReservation,
  recordDraw,
  reservedIdPages,
  type GateModeValue,
  type GateRow,
} from '@/lib/seckill/reservation/reservation.repository';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { findSeckillVoucher, type SeckillRow } from '@/lib/seckill/seckill.repository';

export type ReservationModeName = 'first-come' | 'draw';
export const modeName = (m: GateModeValue): ReservationModeName => (m === GateMode.DRAW ? 'draw' : 'first-come');

/** Makes a flash sale reservation-only, in the caller's transaction (the voucher's creation). The seed is made here; only its hash is shown until the draw. */
export async function gateSale(trx: Executor, voucherId: string, mode: ReservationModeName, reserveBegin: Date): Promise<void> {
  const seed = newSeed();
  await insertGate(trx, { voucherId, mode: mode === 'draw' ? GateMode.DRAW : GateMode.FIRST_COME, reserveBegin, seed, seedHash: seedHash(seed) });
}

const notGated = () => new AppError('NOT_FOUND', '该秒杀无需预约');

async function gatedSale(db: Executor, voucherId: string, lock?: 'share' | 'update'): Promise<{ sale: SeckillRow; gate: GateRow }> {
  const [sale, gate] = await Promise.all([findSeckillVoucher(db, voucherId), findGate(db, voucherId, lock)]);
  if (!sale || sale.type !== VoucherType.SECKILL || sale.status !== VoucherStatus.ON_SALE) throw notFound('秒杀券');
  if (!gate) throw notGated();
  return { sale, gate };
}

/**
 * Runs `write` (the MySQL change, true when it changed a row) and then `mirror` (the same change in
 * the reserved set) in one transaction, the Redis write under the row's lock. A Redis that fails
 * rolls the row back: 503 `failed`, nothing done. A commit that fails after Redis was written (the
 * connection lost at COMMIT) takes the Redis change back, if the row had changed; best effort, logged.
 */
async function writeBoth(
  db: DB,
  write: (trx: Executor) => Promise<boolean>,
  mirror: () => Promise<unknown>,
  undo: () => Promise<unknown>,
  failed: string,
  what: Record<string, string>,
): Promise<void> {
  let changed = false;
  let mirrored = false;
  try {
    // A reserve and a cancel of one key (a next-key or gap lock each, REPEATABLE READ) may deadlock:
    // the victim has written nothing, Redis included (the lock is taken before the Redis write), and runs again.
    await retryDeadlock(() =>
      db.transaction().execute(async (trx) => {
        changed = await write(trx);
        try {
          await mirror();
        } catch {
          throw new AppError('SERVICE_UNAVAILABLE', failed, { retryAfter: 1 });
        }
        mirrored = true;
      }),
    );
  } catch (err) {
    if (mirrored) {
      // Only a failed COMMIT gets here: the row is most likely not changed, so neither is the set.
      const text = (e: unknown) => (e instanceof Error ? e.message : String(e));
      log.warn({ ...what, changed, err: text(err) }, 'reservation: commit failed after Redis was written; taking the Redis change back');
      if (changed) await undo().catch((e: unknown) => log.error({ ...what, err: text(e) }, 'reservation: Redis could not be put back; the next preheat rebuilds the set'));
    }
    throw err;
  }
}

/** Reserve: idempotent (a second call is a no-op), only within [reserveBegin, begin). */
export async function reserve(db: DB, redis: RedisClient, voucherId: string, userId: string, now = new Date()): Promise<ReservationStatus> {
  const set = keys.seckillReserved(voucherId);
  await writeBoth(
    db,
    async (trx) => {
      // FOR SHARE: reservations run side by side; the draw and a rebuild (FOR UPDATE) wait for them.
      const { sale, gate } = await gatedSale(trx, voucherId, 'share');
      if (gate.drawnTime || now >= sale.beginTime) throw new AppError('ENDED', '预约已截止');
      if (now < gate.reserveBegin) throw new AppError('NOT_STARTED', '预约尚未开始');
      return insertReservation(trx, voucherId, userId);
    },
    () => redis.sadd(set, userId),
    () => redis.srem(set, userId),
    '预约未成功，请稍后重试',
    { voucherId, userId },
  );
  return reservationStatus(db, redis, voucherId, userId, now);
}

/** Cancel: idempotent, only before the sale begins (after it the reservation is the right to buy, or the draw's input). */
export async function cancelReservation(db: DB, redis: RedisClient, voucherId: string, userId: string, now = new Date()): Promise<ReservationStatus> {
  const set = keys.seckillReserved(voucherId);
  await writeBoth(
    db,
    async (trx) => {
      const { sale, gate } = await gatedSale(trx, voucherId, 'share');
      if (gate.drawnTime || now >= sale.beginTime) throw new AppError('ENDED', '秒杀已开始，不能再取消预约');
      return deleteReservation(trx, voucherId, userId);
    },
    () => redis.srem(set, userId),
    () => redis.sadd(set, userId),
    '取消预约未成功，请稍后重试',
    { voucherId, userId },
  );
  return reservationStatus(db, redis, voucherId, userId, now);
}

/**
 * Runs the draw once the sale has begun, exactly once across every process: the transaction locks
 * the gate row and draws only if it finds no drawn_time. Then Redis is rebuilt from MySQL
 * (a preheat: winners set, gate 'w'). Safe to call any number of times; returns whether the sale
 * is drawn now (false: not a draw sale, or not begun).
 */
export async function ensureDrawn(db: DB, redis: RedisClient, voucherId: string, now = new Date()): Promise<boolean> {
  const drawnNow = await db.transaction().execute(async (trx) => {
    const gate = await findGate(trx, voucherId, 'update');
    if (!gate || gate.mode !== GateMode.DRAW) return false;
    if (gate.drawnTime) return true;
    const sale = await findSeckillVoucher(trx, voucherId);
    if (!sale || now < sale.beginTime) return false;
    const reserved: string[] = [];
    for await (const page of reservedIdPages(trx, voucherId)) reserved.push(...page);
    const winners = drawWinners(gate.seed, reserved, sale.initialStock);
    await recordDraw(trx, voucherId, winners, reserved.length, now);
    return true;
  });
  if (drawnNow) {
    // Redis may still say 'd' (this call drew, or an earlier one's rebuild failed): bring it in line.
    const field = await redis.hget(keys.seckillMeta(voucherId), 'gate');
    if (field !== 'w') await preheatVoucher(db, redis, voucherId);
  }
  return drawnNow;
}

// Grabs and looks arriving together at a draw sale's start share one ensureDrawn per process (the
// draw itself runs once across processes, under the gate row's lock).
const drawing = new Map<string, Promise<boolean>>();

/** ensureDrawn, one call in flight per voucher in this process. */
export function drawOnce(db: DB, redis: RedisClient, voucherId: string): Promise<boolean> {
  let p = drawing.get(voucherId);
  if (!p) {
    p = ensureDrawn(db, redis, voucherId)
      .catch((err: unknown) => {
        log.warn({ voucherId, err: err instanceof Error ? err.message : String(err) }, 'draw failed; the next grab or look tries again');
        throw err;
      })
      .finally(() => drawing.delete(voucherId));
    drawing.set(voucherId, p);
  }
  return p;
}

export interface ReservationStatus {
  gated: boolean;
  /** Behind the waiting room: grabbed from its page, with a token (absent otherwise). */
  room?: boolean;
  mode?: ReservationModeName;
  reserveBegin?: string;
  beginTime?: string;
  /** Live reservations. */
  reserved?: number;
  /** This user: not reserved, reserved, drawn (may grab), not drawn. null when not logged in. */
  me?: 'none' | 'reserved' | 'won' | 'lost' | null;
  /** The draw: the committed hash always, the seed and the numbers once it ran. */
  draw?: { seedHash: string; seed: string | null; drawnAt: string | null; reserved: number | null; winners: number | null };
}

/**
 * The page's view of a sale's reservation, answered from Redis where it can be (the count, this
 * user's membership). A draw sale past its start is drawn here if nobody did yet, so the user
 * learns the outcome on the first look.
 */
export async function reservationStatus(db: DB, redis: RedisClient, voucherId: string, userId: string | null, now = new Date()): Promise<ReservationStatus> {
  // Every shop page asks this of every flash sale on it: an ordinary sale that Redis holds is
  // answered from its meta hash, without MySQL.
  const [field, begin, roomField, roomUntil] = await redis.hmget(keys.seckillMeta(voucherId), 'gate', 'begin', 'room', 'roomUntil');
  // A sale behind the waiting room (docs/fair-sale.md#the-waiting-room), the merchant's or one that
  // opened by itself and has not lapsed: the page leads to the room.
  const room = roomField === '1' && (roomUntil === null || Number(roomUntil) > now.getTime()) ? { room: true } : {};
  if (begin !== null && field === null) return { gated: false, ...room };
  let gate = await findGate(db, voucherId);
  if (!gate) {
    if (!(await findSeckillVoucher(db, voucherId))) throw notFound('秒杀券');
    return { gated: false };
  }
  const sale = await findSeckillVoucher(db, voucherId);
  if (!sale) throw notFound('秒杀券');
  if (gate.mode === GateMode.DRAW && !gate.drawnTime && now >= sale.beginTime) {
    await drawOnce(db, redis, voucherId);
    gate = (await findGate(db, voucherId))!;
  }
  const [count, inReserved, inWinners] = await Promise.all([
    redis.scard(keys.seckillReserved(voucherId)),
    userId ? redis.sismember(keys.seckillReserved(voucherId), userId) : Promise.resolve(0),
    userId && gate.drawnTime ? redis.sismember(keys.seckillWinners(voucherId), userId) : Promise.resolve(0),
  ]);
  let me: ReservationStatus['me'] = null;
  if (userId) {
    // Redis may have lost its sets (a restart before the repair): MySQL is the record.
    const sure = inReserved && (!gate.drawnTime || inWinners);
    const row = sure ? { won: inWinners ? 1 : null } : await findReservation(db, voucherId, userId);
    me = !row ? 'none' : !gate.drawnTime ? 'reserved' : row.won === 1 ? 'won' : 'lost';
  }
  const reserved = count > 0 ? count : await countReservations(db, voucherId);
  return {
    ...room,
    gated: true,
    mode: modeName(gate.mode),
    reserveBegin: gate.reserveBegin.toISOString(),
    beginTime: sale.beginTime.toISOString(),
    reserved,
    me,
    draw:
      gate.mode === GateMode.DRAW
        ? { seedHash: gate.seedHash, seed: gate.drawnTime ? gate.seed : null, drawnAt: gate.drawnTime?.toISOString() ?? null, reserved: gate.reserved, winners: gate.winners }
        : undefined,
  };
}
