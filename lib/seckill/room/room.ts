/**
 * The waiting room (docs/fair-sale.md#the-waiting-room): a logged-in visitor joins a room sale and
 * gets a signed ticket with a position at once; the same user joining again gets the same place.
 * Tickets issued before the start are shuffled at the start (a seeded, reproducible permutation,
 * lib/seckill/reservation/draw.ts), later ones queue in join order. A serving counter admits
 * positions at the rate the grab path can take (the hot server's measured admission rate). All of
 * it lives in Redis in the voucher's slot, so every web process and host shares one room.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { processAdmission } from '@/lib/hot/admission-limit';
import { drawWinners, newSeed } from '@/lib/seckill/reservation/draw';
import { preheatIfOnSale, type GrabResult } from '@/lib/seckill/grab';
import { refusalMemoryOf } from '@/lib/seckill/refusal-memory';
import { BoundedMemory } from '@/lib/bounded-memory';
import type { Challenge } from 'altcha-lib/types';
import { signTicket, ticketOf } from '@/lib/seckill/room/tokens';
import { roomMetrics } from '@/lib/seckill/room/metrics';
import { MAX_DUE } from '@/lib/seckill/room/turns';

/** `full`: a join after the start that found every unit spoken for got no ticket (docs/fair-sale.md#every-unit-spoken-for). */
export type RoomState = 'none' | 'waiting' | 'admitted' | 'soldout' | 'full';

export interface RoomView {
  state: RoomState;
  /** 1-based; before the start a join order that the shuffle at the start replaces. */
  position: number | null;
  /** Tickets ahead of this one not yet admitted. */
  ahead: number | null;
  /** When this ticket should be admitted, ms from now (0 once admitted). */
  estimateMs: number | null;
  /** False before the start while pre-start tickets wait for the shuffle. */
  shuffled: boolean;
  /** Tickets issued so far, and positions admitted so far. */
  issued: number;
  served: number;
  beginTime: number;
  /** The signed ticket (t1.…), to show the token route. */
  ticket: string | null;
  /** How long an admitted ticket holds its unit, ms (ROOM_HOLD_MS; 0: no hold, the admitted race). */
  holdMs: number;
  /**
   * Waiting while every open unit is held by someone admitted ahead: the estimate is then the
   * soonest this ticket could move up (a hold lapsing), not a promise.
   */
  allHeld: boolean;
  /**
   * Once admitted, and in a join's answer while waiting, the bot gate's challenge for this user and
   * sale (the route adds it): a client solves it without asking for it, one round trip less per
   * buyer at the sale's busiest moment. GET …/room/challenge gives the same kind; the page's widget
   * asks for its own while waiting.
   */
  challenge?: Challenge;
  /** A look or join that asked to buy on admission and was admitted through the gate: the grab's answer (the route adds it). */
  purchase?: GrabResult;
}

/**
 * Tickets per second the serving counter admits: this process's hot-server admission rate (its
 * limit over its measured service time, Little's law) times the web processes, or
 * ROOM_ADMIT_PER_SECOND before anything was measured here; at most ROOM_ADMIT_MAX_PER_SECOND if set.
 */
export function admissionRate(): number {
  const measured = processAdmission()?.ratePerSecond ?? 0;
  const rate = measured > 0 ? measured * Math.max(1, env.WEB_CONCURRENCY) : Math.max(1, env.ROOM_ADMIT_PER_SECOND);
  return env.ROOM_ADMIT_MAX_PER_SECOND > 0 ? Math.min(rate, env.ROOM_ADMIT_MAX_PER_SECOND) : rate;
}

type LookReply = [number, (number | null)?, number?, number?, number?, number?, number?, number?, number?, number?, number?, number?, number?, number?];

const notRoom = () => new AppError('NOT_FOUND', '该秒杀无需排队');

/**
 * What a buyer's look asks of Redis besides the look, in the same round trip
 * (lua/seckill-room-look-10.lua): keep their turn and say whether they are through the gate
 * (`buy`), spend a gate solution the caller has checked (`gate`).
 */
export interface LookAsk {
  /** Asking to buy on admission: keep the turn (with `turns`) and tell whether the gate is passed. */
  buy: boolean;
  /** The sale's grabs go in turn (turns.ts inTurns, known without Redis): keep this buyer's turn. */
  turns: boolean;
  /** A solution to spend: its challenge and how long its spent mark lives (0: it did not check out). */
  gate?: { challenge: string; ttlMs: number };
}

/** What Redis did for a LookAsk: the gate's answer (-1: no solution spent), whether through the gate (-1: not asked), whether the turn was kept. */
export interface LookDone {
  gate: number;
  passed: number;
  kept: boolean;
}

const NOTHING_DONE: LookDone = { gate: -1, passed: -1, kept: false };

function runLook(redis: RedisClient, voucherId: string, userId: string, join: boolean, rate: number, ask: LookAsk | undefined): Promise<LookReply> {
  return runScript<LookReply>(
    redis,
    'seckill-room-look',
    [
      keys.seckillMeta(voucherId),
      keys.roomQueue(voucherId),
      keys.roomState(voucherId),
      keys.seckillStock(voucherId),
      keys.seckillBuyers(voucherId),
      keys.turnDue(voucherId),
      keys.turn(voucherId),
      keys.turnEarly(voucherId),
      keys.roomPassed(voucherId),
      keys.roomPowSpent(voucherId, ask?.gate?.challenge ?? '-'),
    ],
    [userId, join ? '1' : '', env.ROOM_MAX_TICKETS, rate, env.ROOM_HOLD_MS, ask?.buy ? '1' : '', ask?.turns ? env.ROOM_TURN_MS : 0, MAX_DUE, ask?.gate ? ask.gate.ttlMs : '', env.ROOM_RESERVE_PERCENT, env.ROOM_RESERVE_MIN],
  );
}

/** The room as one look saw it (everything but the visitor's own place). */
export interface RoomSnapshot {
  served: number;
  issued: number;
  stock: number;
  begin: number;
  end: number;
  shuffled: boolean;
  /** Redis's clock at the look, ms. */
  now: number;
  /** The admission rate the look moved the counter with, tickets per second. */
  rate: number;
  /** Every open unit is held by an admitted ticket that has not bought yet: the next ticket waits for a lapse or the sell-out. */
  allHeld: boolean;
  /** This look's join was refused a ticket: every unit spoken for (ROOM_RESERVE_PERCENT). */
  full: boolean;
}

/**
 * The last snapshot this process saw of each room sale (only sales a look answered for enter, at
 * most until the sale's end, a minute at most, 10 000 sales at most): the frame of a sold-out answer
 * from memory.
 */
const lastSnapshots = new BoundedMemory<RoomSnapshot>(60_000, 10_000);

/**
 * One look (and a join when `join`) in Redis: the room's state and this user's position (null: no
 * ticket). An empty `userId` looks at the room alone (the long poll's watcher, park.ts). Shuffles
 * the pre-start tickets first when the sale has just started; refusals as AppErrors.
 */
export async function lookUp(db: DB, redis: RedisClient, voucherId: string, userId: string, join: boolean, ask?: LookAsk): Promise<{ position: number | null; snap: RoomSnapshot; done: LookDone }> {
  const rate = admissionRate();
  const refusals = refusalMemoryOf(redis);
  const mark = refusals?.mark() ?? 0;
  let r = await runLook(redis, voucherId, userId, join, rate, ask);
  if (r[0] === 1 && (await preheatIfOnSale(db, redis, voucherId))) r = await runLook(redis, voucherId, userId, join, rate, ask);
  if (r[0] === 5) {
    await shuffleOnce(redis, voucherId);
    r = await runLook(redis, voucherId, userId, join, rate, ask);
  }
  switch (r[0]) {
    case 0:
      break;
    case 1:
      throw notFound('秒杀券');
    case 2:
      throw notRoom();
    case 3:
      throw new AppError('ENDED', '秒杀已经结束');
    case 4:
      throw new AppError('SERVICE_UNAVAILABLE', '排队人数已满，请稍后再试', { retryAfter: 5 });
    default:
      throw new AppError('SERVICE_UNAVAILABLE', '正在开场排序，请稍后再试', { retryAfter: 1 });
  }
  const [, pos, served = 0, issued = 0, stock = 0, begin = 0, end = 0, shuffled = 0, now = Date.now(), held = 0, gate = -1, passed = -1, kept = 0, full = 0] = r;
  roomMetrics.observe(voucherId, issued, served, end);
  if (join && pos === issued && issued > 0) roomMetrics.joined();
  if (join && full === 1 && typeof pos !== 'number') roomMetrics.full('redis');
  const snap = { served, issued, stock, begin, end, shuffled: shuffled === 1, now, rate, allHeld: held === 1, full: full === 1 };
  lastSnapshots.set(voucherId, snap, end);
  // Every unit spoken for: the next joins of this process hear it from memory for a moment (a
  // lapse or a purchase may make room again; the bound is the refusal memory's).
  if (full === 1) fullRooms.set(voucherId, snap, end);
  // No stock left: what the grab script would answer, so the grab route and the next looks here
  // hear it from memory (a returned unit or an add-stock invalidates it, as for the grab's own).
  if (stock <= 0) refusals?.record(voucherId, 'SOLD_OUT', mark, end);
  return { position: typeof pos === 'number' ? pos : null, snap, done: ask ? { gate, passed, kept: kept === 1 } : NOTHING_DONE };
}

/**
 * 已抢光 without Redis when this process knows the sale is sold out (its refusal memory, which the
 * grab script's answers, the looks above and every invalidation keep honest): in a spike almost
 * every visitor arrives after the last unit went, and their one answer is final. No ticket is
 * issued then: a place in a queue for nothing helps nobody (docs/fair-sale.md#sold-out).
 */
export function soldOutFromMemory(redis: RedisClient, voucherId: string): RoomView | null {
  if (refusalMemoryOf(redis)?.lookup(voucherId) !== 'SOLD_OUT') return null;
  const snap = lastSnapshots.get(voucherId);
  if (!snap) return null;
  // No place: no ticket to sign, so no user, and the same view for everyone told from this snapshot
  // (views are shared, never changed: an answer that adds to one copies it). One object per
  // snapshot lets the door send the same serialized answer to the whole crowd (route.ts answerKnown).
  let known = soldOutViews.get(snap);
  if (!known) soldOutViews.set(snap, (known = Object.freeze(viewOf(voucherId, '', null, snap, true))));
  return known;
}

/** The sold-out view of each snapshot still remembered (lastSnapshots holds the snapshots). */
const soldOutViews = new WeakMap<RoomSnapshot, RoomView>();

/** The header a join shows its ticket in, so that memory never tells a ticket holder 名额已满. */
export const TICKET_HEADER = 'x-room-ticket';

/**
 * Sales whose last join here found every unit spoken for, with that look's snapshot, for the
 * refusal memory's bound (SECKILL_REFUSAL_MEMORY_MS): not a fact to keep, since a hold that lapses
 * or a purchase may make room again, and nothing announces it. Not trusted through pub/sub either:
 * a newcomer may hear 名额已满 that long after room was made, never a ticket holder (below).
 */
const fullRooms = new BoundedMemory<RoomSnapshot>(env.SECKILL_REFUSAL_MEMORY_MS, 10_000);
const fullViews = new WeakMap<RoomSnapshot, RoomView>();

/**
 * 名额已满 without Redis, for a join by a newcomer (no ticket of this sale in `ticketHeader`) while
 * this process remembers the room full (fullRooms). A join that carries its own valid ticket goes to
 * Redis as always: a ticket holder never hears it, whatever the memory says.
 */
export function fullFromMemory(voucherId: string, ticketHeader: string | null | undefined): RoomView | null {
  const snap = fullRooms.get(voucherId);
  if (!snap) return null;
  if (ticketHeader && ticketOf(ticketHeader, voucherId)) return null;
  let known = fullViews.get(snap);
  if (!known) fullViews.set(snap, (known = Object.freeze(view('full', null, null, null, false, null, snap))));
  roomMetrics.full('memory');
  return known;
}

/** Sold out: no stock at the look, or this process already knows it (the grab taught it). */
export function soldOutAt(redis: RedisClient, voucherId: string, snap: RoomSnapshot): boolean {
  return snap.stock <= 0 || refusalMemoryOf(redis)?.lookup(voucherId) === 'SOLD_OUT';
}

/** Where a ticket holder stands in a snapshot of the room, with their ticket signed for that place. */
export function viewOf(voucherId: string, userId: string, position: number | null, snap: RoomSnapshot, soldOut: boolean): RoomView {
  const ticket = position === null ? null : signTicket({ voucherId, userId, position, expiresAt: snap.end });
  // Sold out: everyone waiting hears it at once.
  if (soldOut) return view('soldout', position, null, null, false, ticket, snap);
  if (position === null) return view(snap.full ? 'full' : 'none', position, null, null, false, ticket, snap);
  if (snap.now >= snap.begin && position <= snap.served) return view('admitted', position, 0, 0, false, ticket, snap);
  const ahead = Math.max(0, position - Math.floor(snap.served) - 1);
  const untilStart = Math.max(0, snap.begin - snap.now);
  const byRate = untilStart + ((ahead + 1) * 1000) / snap.rate;
  // Every unit held by someone ahead: the soonest this place can move is a hold lapsing.
  if (snap.allHeld) return view('waiting', position, ahead, Math.round(byRate + env.ROOM_HOLD_MS), true, ticket, snap);
  return view('waiting', position, ahead, Math.round(byRate), false, ticket, snap);
}

/**
 * A view as one object literal: every look and every answer from memory builds one, and a spread
 * with properties added after it (`{ ...base, state }`) took V8 (node 20) several microseconds
 * where a literal takes a tenth of one.
 */
function view(state: RoomState, position: number | null, ahead: number | null, estimateMs: number | null, allHeld: boolean, ticket: string | null, snap: RoomSnapshot): RoomView {
  return { state, position, ahead, estimateMs, shuffled: snap.shuffled, issued: snap.issued, served: Math.floor(snap.served), beginTime: snap.begin, ticket, holdMs: env.ROOM_HOLD_MS, allHeld };
}

/**
 * A look at the room (and a join when `join`): where this user stands now, with the snapshot it was
 * read from (none when the answer came from memory: sold out).
 */
export async function lookRoomWithSnapshot(db: DB, redis: RedisClient, voucherId: string, userId: string, join: boolean, ask?: LookAsk): Promise<{ view: RoomView; snap: RoomSnapshot | null; done: LookDone }> {
  const known = soldOutFromMemory(redis, voucherId);
  if (known) return { view: known, snap: null, done: NOTHING_DONE };
  const { position, snap, done } = await lookUp(db, redis, voucherId, userId, join, ask);
  return { view: viewOf(voucherId, userId, position, snap, soldOutAt(redis, voucherId, snap)), snap, done };
}

/** A look at the room (and a join when `join`): where this user stands now. */
export async function lookRoom(db: DB, redis: RedisClient, voucherId: string, userId: string, join: boolean): Promise<RoomView> {
  return (await lookRoomWithSnapshot(db, redis, voucherId, userId, join)).view;
}

// Looks of one process arriving together at the start share one shuffle.
const shuffling = new Map<string, Promise<void>>();

/** Where the room has put these users (null: not in it), read 5 000 a round trip: after the start's shuffle, their final places. */
export async function placesInRoom(redis: RedisClient, voucherId: string, userIds: readonly string[]): Promise<(number | null)[]> {
  const places: (number | null)[] = [];
  for (let i = 0; i < userIds.length; i += 5000) {
    for (const s of await redis.zmscore(keys.roomQueue(voucherId), ...userIds.slice(i, i + 5000))) places.push(s === null ? null : Number(s));
  }
  return places;
}

/**
 * Shuffles the pre-start tickets once (any process may; the script keeps the first). The
 * permutation is the draw's seeded Fisher–Yates over the ticket holders' ids sorted as numbers, so
 * anyone holding the seed (kept in the room's state) and the ids can re-run it.
 */
export function shuffleOnce(redis: RedisClient, voucherId: string): Promise<void> {
  let p = shuffling.get(voucherId);
  if (!p) {
    p = (async () => {
      const pre = Number(await redis.hget(keys.roomState(voucherId), 'pre')) || 0;
      const ids = pre > 0 ? await redis.zrangebyscore(keys.roomQueue(voucherId), 1, pre) : [];
      const seed = newSeed();
      await runScript<number>(redis, 'seckill-room-shuffle', [keys.seckillMeta(voucherId), keys.roomQueue(voucherId), keys.roomState(voucherId)], [seed, ...shuffledIds(seed, ids)]);
    })().finally(() => shuffling.delete(voucherId));
    shuffling.set(voucherId, p);
  }
  return p;
}

/** The pre-start ticket holders in their new order (position i + 1 for index i). */
export function shuffledIds(seed: string, ids: readonly string[]): string[] {
  return drawWinners(seed, ids, ids.length);
}
