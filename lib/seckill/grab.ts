/**
 * The grab path (docs/flash-sale.md#where-a-grab-goes): a candidate order id from this process's pool (no round trip) →
 * one Lua script checks the rate limits, decides and records the order in the voucher's outbox →
 * the order message is published to RabbitMQ with the other orders of this event-loop turn, and
 * the grab answers 200 `pending` once the broker has confirmed it. A refused grab gives its id back.
 *
 * Why wait for the confirm: Redis may forget an accepted grab (a Cluster failover, a restart without
 * fsync) and its outbox entry with it; a persistent message in a durable queue is not forgotten.
 * So a 200 means the order is in RabbitMQ, and the worker will write it or report it failed. If
 * the confirm does not come (broker down, channel closed, PUBLISH_CONFIRM_TIMEOUT_MS), the order is
 * voided in MySQL if the broker may hold it anyway, the unit is given back in one script (outbox
 * entry, buyer, unit: to the waitlist's head if anyone waits, else the stock) and the grab answers
 * 503 with Retry-After (giveBackUnconfirmed).
 */
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { VoucherStatus, VoucherType } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { OrderIdPool, type TakenId } from '@/lib/id/pool';
import { log } from '@/lib/log';
import { voidUnconfirmedOrder } from '@/lib/seckill/failure.repository';
import type { OrderMessage } from '@/lib/seckill/message';
import { publishSoon, PublishUnconfirmedError } from '@/lib/seckill/publish-batch';
import { consume, limitMessages } from '@/lib/rate-limit';
import { isCommandTimeout } from '@/lib/redis/timeout';
import { grabVoucherInDb } from '@/lib/seckill/grab-db';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { countRefusalFromMemory, refusalMemoryOf, type RememberedCode } from '@/lib/seckill/refusal-memory';
import { findSeckillVoucher } from '@/lib/seckill/seckill.repository';
import { waitForReplica } from '@/lib/seckill/replica-wait';
import { releaseOrder } from '@/lib/seckill/outbox';
import { drawOnce } from '@/lib/seckill/reservation/reservation';
import { countSaleGrab } from '@/lib/seckill/sale-metrics';
import { needTicket, rememberRoomSale } from '@/lib/seckill/room/room-memory';
import { bucketCount, knownBucketCount } from '@/lib/seckill/buckets/count';
import { grabWithRebalance } from '@/lib/seckill/buckets/rebalance';
import { bucketTag, homeBucket } from '@/lib/seckill/buckets/tags';
import { awaitTurn } from '@/lib/seckill/room/turns';
import { runGrabScript, type GrabReply } from '@/lib/seckill/grab-script';
import { SPEND_NOW_NONCE } from '@/lib/seckill/room/tokens';

export { runGrabScript, type GrabReply };

export interface GrabInput {
  voucherId: string;
  userId: string;
  ip: string;
  /** A verified grab token's `<epoch>.<nonce>` (docs/fair-sale.md#the-grab-token); absent when the grab carries none. */
  nonce?: string;
  /**
   * Buying on admission in turn (docs/fair-sale.md#in-turn): the buyer's room place. The grab waits,
   * parked in Redis, while a place ahead is due; `onWait` is called when it does.
   */
  turn?: { place: number; onWait?: () => void };
}

export interface GrabResult {
  orderId: string;
  /** `pending` until the worker has written the order; the `db` benchmark strategy answers `created`. */
  status: 'pending' | 'created';
}

export const GrabCode = { ACCEPTED: 0, UNKNOWN: 1, NOT_STARTED: 2, ENDED: 3, ALREADY_BOUGHT: 4, SOLD_OUT: 5, RATE_LIMITED: 6, FORFEITED: 7, NOT_RESERVED: 8, DRAW_PENDING: 9, NOT_DRAWN: 10, NO_TOKEN: 11, TOKEN_USED: 12, STALE_TOKEN: 13, TURN_PARKED: 14, TURN_TAKEN_BACK: 16 } as const;

const refusals: Record<number, () => AppError> = {
  [GrabCode.UNKNOWN]: () => notFound('秒杀券'),
  [GrabCode.NOT_STARTED]: () => new AppError('NOT_STARTED', '秒杀尚未开始'),
  [GrabCode.ENDED]: () => new AppError('ENDED', '秒杀已经结束'),
  [GrabCode.ALREADY_BOUGHT]: () => new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了'),
  [GrabCode.SOLD_OUT]: () => new AppError('SOLD_OUT', '已售罄'),
  [GrabCode.FORFEITED]: () => new AppError('FORFEITED', '你已取消过该秒杀券的订单，名额已让给其他人，不能再抢'),
  [GrabCode.NOT_RESERVED]: () => new AppError('NOT_RESERVED', '该秒杀仅限预约用户参与，你没有预约'),
  [GrabCode.NOT_DRAWN]: () => new AppError('NOT_DRAWN', '很遗憾，你未被抽中，本场不能抢购'),
  [GrabCode.NO_TOKEN]: () => needTicket(),
  [GrabCode.TOKEN_USED]: () => new AppError('TOKEN_USED', '抢购凭证已使用，请回到排队页重新获取'),
  // Minted before Redis lost the sale (and the room with it): back through the room.
  [GrabCode.STALE_TOKEN]: () => needTicket(),
  // The draw did not run even when asked (MySQL unreachable): try again shortly.
  [GrabCode.DRAW_PENDING]: () => new AppError('SERVICE_UNAVAILABLE', '正在抽签，请稍后再试', { retryAfter: 1 }),
  // A grab in turn that waited past every moment ahead and was taken back unrun (lib/seckill/room/turns.ts).
  [GrabCode.TURN_TAKEN_BACK]: () => new AppError('SERVICE_UNAVAILABLE', '排队购买超时，请重试', { retryAfter: 1 }),
};

/** The refusals a process may remember (lib/seckill/refusal-memory.ts): facts about the voucher, not the user. */
const rememberable: Record<number, RememberedCode> = { [GrabCode.NOT_STARTED]: 'NOT_STARTED', [GrabCode.ENDED]: 'ENDED', [GrabCode.SOLD_OUT]: 'SOLD_OUT' };

// `__hmdpGrabInDb`: the benchmark's comparison path (the original project's synchronous MySQL grab,
// lib/seckill/grab-db.ts), set only by the bench's preload e2e/bench/hooks/grab-in-db.mjs.
const g = globalThis as unknown as { __hmdpOrderIds?: OrderIdPool; __hmdpGrabInDb?: boolean };

/**
 * The refusal this process remembers for a voucher it knows to be sold out / not started / ended
 * (the same refusal the script would give; counted as answered from memory), or null when Redis
 * must decide. Returned, not thrown: the grab route answers it without a throw or a promise
 * (a throw cost 2.6 µs here, docs/hot-server.md#errors-are-answers).
 */
export function rememberedRefusal(redis: RedisClient, voucherId: string): AppError | null {
  if (g.__hmdpGrabInDb) return null;
  const known = refusalMemoryOf(redis)?.lookup(voucherId);
  if (!known) return null;
  countRefusalFromMemory(known);
  countSaleGrab(voucherId, 'refused', known === 'ENDED');
  return rememberedAnswer[known];
}

// One instance of each: an AppError is an answer (code, message, never changed once made), and
// building one per refusal was 2 % of a sold-out storm's CPU.
const rememberedAnswer: Record<RememberedCode, AppError> = {
  SOLD_OUT: refusals[GrabCode.SOLD_OUT]!(),
  NOT_STARTED: refusals[GrabCode.NOT_STARTED]!(),
  ENDED: refusals[GrabCode.ENDED]!(),
};

/** The next order id of this process's pool, as a grab takes it (tests read which id the pool hands out next). */
export function takeOrderId(redis: RedisClient): Promise<TakenId> | TakenId {
  const ids = idPool(redis);
  return ids.takeNow() ?? ids.take();
}

const idPool = (redis: RedisClient) => (g.__hmdpOrderIds ??= new OrderIdPool(redis));

/**
 * The grab through Redis (or MySQL for the `db` benchmark strategy). A refusal this process
 * remembers is answered before it, by the route (rememberedRefusal): this asks Redis, and teaches
 * the memory what Redis answers.
 */
export async function grabVoucher(db: DB, redis: RedisClient, input: GrabInput): Promise<GrabResult> {
  if (g.__hmdpGrabInDb) {
    await Promise.all([consume('seckillUser', input.userId), consume('seckillIp', input.ip)]);
    return grabVoucherInDb(db, redis, input);
  }
  const memory = refusalMemoryOf(redis);
  const mark = memory?.mark() ?? 0;
  const ids = idPool(redis);
  const { id: orderId, giveBack } = ids.takeNow() ?? (await ids.take());
  const limits = env.RATE_LIMITS ? { user: env.SECKILL_USER_PER_SECOND, ip: env.SECKILL_IP_PER_SECOND } : undefined;
  // The user's home bucket (docs/buckets.md): the voucher's own tag for N = 1; N is asked of
  // Redis once per voucher per process, never per grab.
  let n = knownBucketCount(input.voucherId) ?? (await bucketCount(redis, input.voucherId));
  let tag = n === 1 ? input.voucherId : bucketTag(input.voucherId, homeBucket(input.userId, n), n);
  // In turn only in one bucket: a bucketed sale's grabs run on its buckets' slots, apart (docs/buckets.md).
  const turn = n === 1 && env.ROOM_TURN_MS > 0 ? input.turn : undefined;
  // Literals, not `{ ...input, orderId, tag }`: V8 (node 20) takes microseconds for a spread with
  // properties added after it, on the path of every grab. A call after the first counts no limits
  // (the first did) and reads `tag` as it is then.
  const { voucherId, userId, ip, nonce } = input;
  const grabAgain = () => runGrabScript(redis, { voucherId, userId, ip, nonce, orderId, tag }).catch(unanswered);
  let first = await runGrabScript(redis, { voucherId, userId, ip, nonce, orderId, limits, tag, turn: turn && { mode: 'g', place: turn.place } }).catch(unanswered);
  if (turn && first[0] === GrabCode.TURN_PARKED) {
    turn.onWait?.();
    first = await awaitTurn(redis, input.voucherId, input.userId, orderId, turn.place, Number(first[2]));
  }
  let [code, payload, third] = first;
  // The room's own buy (a token minted and spent in this call: docs/fair-sale.md#buying-on-admission)
  // in a sale Redis no longer knows: the room that admitted the buyer is gone with it, so no grab in
  // a rebuilt copy (whose buyers set lacks orders still queued); 503, and the next look rebuilds it.
  if (code === GrabCode.UNKNOWN && input.nonce === SPEND_NOW_NONCE) {
    giveBack();
    throw new AppError('SERVICE_UNAVAILABLE', '服务繁忙，请稍后再试', { retryAfter: 1 });
  }
  // Not in Redis: a voucher created without a preheat, or Redis lost its keys. Rebuild and retry
  // once (the limits were counted by the first call). The per-voucher limits inside the script do
  // not bound a user grabbing a made-up id each time, and each costs a MySQL read: such cold grabs
  // are counted per user across vouchers (an honest user meets a cold sale once).
  if (code === GrabCode.UNKNOWN && (await coldGrabAllowed(input.userId, giveBack)) && (await preheatIfOnSale(db, redis, input.voucherId))) {
    n = await bucketCount(redis, input.voucherId);
    tag = n === 1 ? input.voucherId : bucketTag(input.voucherId, homeBucket(input.userId, n), n);
    [code, payload, third] = await grabAgain();
  }
  // A bucketed sale: the home bucket is empty, others may not be. Move stock home and ask again;
  // "sold out" is the whole sale's only when every bucket says so (docs/buckets.md#sold-out-is-the-sum).
  let soldOutEverywhere = n === 1;
  if (code === GrabCode.SOLD_OUT && n > 1) {
    const again = await grabWithRebalance(redis, input.voucherId, n, homeBucket(input.userId, n), GrabCode.SOLD_OUT, grabAgain);
    soldOutEverywhere = again.soldOut;
    if (again.reply) [code, payload, third] = again.reply;
  }
  // A draw sale that has begun but not been drawn: the first grab runs the draw (once across every
  // process, docs/fair-sale.md#who-draws) and asks again.
  if (code === GrabCode.DRAW_PENDING && (await drawOnce(db, redis, input.voucherId).catch(() => false))) {
    [code, payload, third] = await grabAgain();
  }
  // Per-sale counts (lib/seckill/sale-metrics.ts): only for a voucher the script knows.
  if (code !== GrabCode.UNKNOWN) countSaleGrab(input.voucherId, code === GrabCode.ACCEPTED && payload ? 'accepted' : 'refused', code === GrabCode.ENDED);
  if (code !== GrabCode.ACCEPTED || !payload) {
    giveBack();
    // This user's earlier grab, in this process, holds the unit but is still waiting for its
    // confirm and may yet give it back: "already bought" would be a promise it cannot keep.
    if (code === GrabCode.ALREADY_BOUGHT) {
      const firstGrab = unconfirmed.get(`${input.voucherId}:${input.userId}`);
      if (firstGrab && !(await firstGrab)) throw stillConfirming();
    }
    const remember = rememberable[code];
    if (remember && memory && (code !== GrabCode.SOLD_OUT || soldOutEverywhere)) memory.record(input.voucherId, remember, mark, code === GrabCode.NOT_STARTED ? Number(payload) || 0 : undefined);
    // A merchant's room stays one (set at creation): the next token-less grab here is refused
    // without Redis. A room that opened by itself (payload: when it lapses) is asked each time.
    if (code === GrabCode.NO_TOKEN && !payload) rememberRoomSale(input.voucherId);
    if (code === GrabCode.RATE_LIMITED) throw rateLimited(first[2], Number(payload));
    throw (refusals[code] ?? refusals[GrabCode.UNKNOWN]!)();
  }

  // Opt-in: trade latency for grabs a failover cannot forget (measured: docs/redis-cluster.md#replica-wait-is-off-by-default).
  if (env.SECKILL_REPLICA_WAIT_MS > 0) await waitForReplica(redis, tag, env.SECKILL_REPLICA_WAIT_MS);
  // The script wrote exactly these fields (ids validated by the route) and returned its clock:
  // no need to parse the payload back.
  const at = Number(third);
  if (!Number.isSafeInteger(at) || at <= 0) throw new Error(`grab script returned no acceptance time: ${String(third)}`);
  const msg: OrderMessage = { v: 1, orderId, userId: input.userId, voucherId: input.voucherId, at };
  // Published with the rest of this turn's orders (lib/seckill/publish-batch.ts); 200 only once confirmed.
  const mine = `${input.voucherId}:${input.userId}`;
  let settle!: (kept: boolean) => void;
  unconfirmed.set(mine, new Promise<boolean>((resolve) => (settle = resolve)));
  let kept = false;
  try {
    await publishSoon(msg);
    kept = true;
  } catch (err) {
    const r = await giveBackUnconfirmed(db, redis, msg, err);
    kept = true; // MySQL already had it: the order stands
    return r;
  } finally {
    unconfirmed.delete(mine);
    settle(kept);
  }
  return { orderId, status: 'pending' };
}

/**
 * `<voucherId>:<userId>` of the grabs of this process that Redis accepted and whose confirm (or
 * give-back) is still under way. A second grab of the same user is refused ALREADY_BOUGHT by the
 * script while the first holds the unit; if the first then gives it back, that buyer would end
 * with nothing after hearing "already bought". Its reply reaches us before the give-back's (one
 * connection to the slot's node, replies in order), so the entry is still here: the second grab
 * waits for the first to settle (a confirm is milliseconds) and then answers ALREADY_BOUGHT if the
 * first kept its unit, 503 (retry) if it gave it back. A grab on another web process still hears
 * ALREADY_BOUGHT at once (docs/flash-sale.md#what-a-200-means).
 */
const unconfirmed = new Map<string, Promise<boolean>>();

const stillConfirming = () => new AppError('SERVICE_UNAVAILABLE', '你的上一次抢购正在处理中，请稍后查看订单或重试', { retryAfter: 1 });

/**
 * The grab script got no answer in REDIS_COMMAND_TIMEOUT_MS (a cut link, a stalled node). It may
 * have run: then its order sits in the outbox, the sweeper publishes it (OUTBOX_STALE_MS) and the
 * worker writes it, and the buyer's retry hears ALREADY_BOUGHT. So: 503, nothing given back (the
 * order id neither: it may be in use), and never a 200.
 */
function unanswered(err: unknown): never {
  if (isCommandTimeout(err)) throw new AppError('SERVICE_UNAVAILABLE', '网络繁忙，抢购结果未能确认，请稍后查看订单或重试', { retryAfter: 1 });
  throw err;
}

/** Retry-After (seconds) of a grab whose order could not be handed to the broker. */
const UNPUBLISHED_RETRY_AFTER_S = 1;

const unavailable = () => new AppError('SERVICE_UNAVAILABLE', '下单通道繁忙，名额已退回，请稍后重试', { retryAfter: UNPUBLISHED_RETRY_AFTER_S });
const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The broker did not confirm this order: take the grab back and answer 503, so the buyer retries.
 *
 * If the message was handed to the channel (a lost or late confirm, a channel that closed after the
 * write), the broker may hold it all the same and the worker would write an order whose unit was
 * given back. So first void it in MySQL (tb_order_failure UNCONFIRMED, only if the order is not
 * there yet; the worker never writes a voided id). Then give the unit back in one script (outbox
 * entry, buyer, unit, only if the entry is still there; lua/seckill-release-8.lua).
 *
 * The 200 stands instead when
 *   - the worker already wrote the order (the void finds it): only the confirm was late;
 *   - MySQL cannot be reached for the void, or Redis for the release of a message never handed over:
 *     the entry is still in the outbox (the release script runs all or nothing), the sweeper
 *     publishes it (OUTBOX_STALE_MS later; it knows the voucher: every preheat puts it in
 *     seckill:active, and a grab is only accepted on preheated keys) — as safe as Redis is, and a
 *     503 would be a lie that leaves a real order behind;
 *   - the release finds no entry for a message never handed over, and MySQL already holds the
 *     order (the sweeper republished it meanwhile); if MySQL does not, it is voided there: 503.
 * A voided order stays a 503 even if the release fails or finds nothing: it will never be written,
 * and the sweeper gives back a unit still held. `offerUntil`: the order was a claimed waitlist
 * offer's (its expiry): the release gives the offer back to its claimer (lua/seckill-release-8.lua).
 */
export async function giveBackUnconfirmed(db: DB, redis: RedisClient, msg: OrderMessage, cause: unknown, offerUntil?: number): Promise<GrabResult> {
  const { orderId, voucherId, userId } = msg;
  const pending: GrabResult = { orderId, status: 'pending' };
  let voided = false;
  if (!(cause instanceof PublishUnconfirmedError) || cause.maybeSent) {
    try {
      voided = await voidUnconfirmedOrder(db, msg);
    } catch (err) {
      log.warn({ orderId, voucherId, why: errText(cause), err: errText(err) }, 'unconfirmed order could not be voided; it stays in the outbox for the sweeper');
      return pending;
    }
    if (!voided) return pending;
  }
  let released = false;
  try {
    released = await releaseOrder(redis, voucherId, orderId, userId, offerUntil);
  } catch (err) {
    log.warn({ orderId, voucherId, voided, err: errText(err) }, 'unconfirmed order could not be released');
    if (voided) throw unavailable();
    // A timed-out release may have run all the same (entry, buyer and unit gone, nothing handed
    // over): the outbox can no longer be trusted to hold it. MySQL decides, as below.
    if (!isCommandTimeout(err)) return pending;
  }
  if (released || voided) throw unavailable();
  // Never handed to the broker, and no entry left: Redis forgot it (then no order exists anywhere)
  // or the sweeper republished it (then the worker writes it). MySQL decides, as above.
  let voidedNow: boolean;
  try {
    voidedNow = await voidUnconfirmedOrder(db, msg);
  } catch (err) {
    log.warn({ orderId, voucherId, err: errText(err) }, 'vanished unconfirmed order could not be voided');
    return pending;
  }
  if (voidedNow) throw unavailable();
  return pending;
}

function rateLimited(who: unknown, waitMs: number): AppError {
  const message = who === 'ip' ? limitMessages.seckillIp : limitMessages.seckillUser;
  return new AppError('RATE_LIMITED', message, { retryAfter: waitMs / 1000 });
}

/** Counts a grab of a voucher Redis does not know (`grabColdUser`); a refusal gives the order id back and answers 429. */
async function coldGrabAllowed(userId: string, giveBack: () => void): Promise<boolean> {
  try {
    await consume('grabColdUser', userId);
    return true;
  } catch (err) {
    giveBack();
    throw err;
  }
}

// Grabs (and room looks) racing on a cold voucher share one rebuild per process (a rebuild reads every buyer).
const preheating = new Map<string, Promise<boolean>>();

export function preheatIfOnSale(db: DB, redis: RedisClient, voucherId: string): Promise<boolean> {
  let p = preheating.get(voucherId);
  if (!p) {
    p = (async () => {
      const v = await findSeckillVoucher(db, voucherId);
      if (!v || v.type !== VoucherType.SECKILL || v.status !== VoucherStatus.ON_SALE) return false;
      await preheatVoucher(db, redis, voucherId);
      return true;
    })().finally(() => preheating.delete(voucherId));
    preheating.set(voucherId, p);
  }
  return p;
}
