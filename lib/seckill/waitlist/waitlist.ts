/**
 * The waitlist for returned units (docs/fair-sale.md#waitlist): a user joins a sold-out sale's
 * waitlist; a unit that comes back (cancel, timeout, refund) is offered to its head by the return
 * script itself (lua/seckill-return-8.lua, lib/order/stock-return.ts), and the offer is claimed
 * here: the claim script records the order exactly as an accepted grab (buyer, outbox entry, the
 * same order message), and the message goes the grab's way to the broker (publishSoon, and
 * giveBackUnconfirmed if the broker does not confirm), so the worker and the sweeper cannot tell
 * the two apart. Expired offers move on in the worker's pass (./offer-expiry.ts), and a join by the
 * holder of a lapsed offer the pass has not reached yet runs that pass itself first.
 *
 * Keys live in the user's home bucket tag (COMMON shape); with one bucket that tag is the voucher id.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError, notFound } from '@/lib/errors';
import { nextOrderId } from '@/lib/id';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { giveBackUnconfirmed, type GrabResult } from '@/lib/seckill/grab';
import type { OrderMessage } from '@/lib/seckill/message';
import { publishSoon } from '@/lib/seckill/publish-batch';
import { waitKeys, waitTag } from '@/lib/seckill/waitlist/tag';
import { bucketCount } from '@/lib/seckill/buckets/count';
import { passGate } from '@/lib/seckill/room/grab-token';
import { expireOffers } from '@/lib/seckill/waitlist/offer-expiry';


export type WaitlistMe = { state: 'none' } | { state: 'waiting'; position: number } | { state: 'offered'; expiresInMs: number };

export interface WaitlistView {
  /** Users waiting (not counting open offers). */
  waiting: number;
  /** How long an offer stays open, so a page can draw its countdown bar. */
  offerMs: number;
  /** null without a session. */
  me: WaitlistMe | null;
  /**
   * A room sale's waitlist asks for the room's bot gate first (docs/fair-sale.md#a-room-sales-waitlist):
   * true when this user has not passed it yet, so the page shows the widget and joins with its
   * solution. Absent without a session.
   */
  gate?: boolean;
}

const refusals: Record<number, () => AppError> = {
  1: () => notFound('秒杀券'),
  2: () => new AppError('NOT_STARTED', '秒杀尚未开始'),
  3: () => new AppError('ENDED', '秒杀已经结束'),
  4: () => new AppError('ALREADY_BOUGHT', '每人限抢一张，你已经抢过了'),
  7: () => new AppError('FORFEITED', '你已取消过该秒杀券的订单，不能再候补'),
  8: () => new AppError('NOT_RESERVED', '该秒杀仅限预约（中签）用户参与，不能候补'),
  13: () => new AppError('NO_OFFER', '你没有待购买的候补名额'),
  14: () => new AppError('OFFER_EXPIRED', '候补名额已过期，已转给下一位'),
  16: () => new AppError('NOT_SOLD_OUT', '还有库存，请直接抢购'),
  17: () => new AppError('WAITLIST_FULL', '候补人数已满'),
  18: () => new AppError('POW_FAILED', '请先完成人机验证再加入候补'),
};
const refusal = (code: number) => (refusals[code] ?? refusals[1]!)();

/**
 * Joins (idempotent: a second join answers the same place). Refusals are 4xx AppErrors. A user whose
 * offer lapsed a moment ago has it closed first (the sale's expiry pass), then joins behind everyone. `altcha`
 * passes a room sale's bot gate first (spent once; POW_FAILED if wrong), for a user who never
 * passed it in the room: a latecomer, or one the room told 已抢光 before their turn.
 */
export async function joinWaitlist(redis: RedisClient, voucherId: string, userId: string, altcha?: string): Promise<WaitlistView> {
  // A bucketed sale (docs/buckets.md) has no waitlist: one-per-user is decided in each user's home
  // bucket, and a waitlist per bucket would hand a unit returned in one bucket to a user of another.
  if ((await bucketCount(redis, voucherId)) > 1) throw new AppError('WAITLIST_UNSUPPORTED', '该秒杀不支持候补');
  if (altcha !== undefined) await passGate(redis, voucherId, userId, altcha, false);
  const t = waitTag(voucherId);
  const w = waitKeys(voucherId);
  const join = () =>
    runScript<[number, (string | number)?, number?]>(
      redis,
      'seckill-waitlist-join',
      [
        keys.seckillMeta(t),
        keys.seckillStock(t),
        keys.seckillBuyers(t),
        keys.seckillForfeit(t),
        keys.seckillReserved(t),
        keys.seckillWinners(t),
        w.waitlist,
        w.offers,
        w.stats,
        keys.roomQueue(voucherId),
        keys.roomPassed(voucherId),
        w.lapsed,
      ],
      [userId, env.WAITLIST_MAX],
    );
  let r = await join();
  if (r[0] === 19) {
    // Their offer ran out a moment ago and the worker's pass (every second) has not closed it yet:
    // closed now, its unit moved on to the next waiter (or the open stock), and the user joins
    // behind everyone, as they would a second later, rather than clicking into a no-op.
    await expireOffers(redis, voucherId);
    r = await join();
    // Only if Redis' clock stepped back meanwhile (a failover), or a new offer of theirs ended at once.
    if (r[0] === 19) throw new AppError('SERVICE_UNAVAILABLE', '候补名额正在转给下一位，请稍后再试', { retryAfter: 1 });
  }
  // 15: already holds an offer — not an error, the view shows it.
  if (r[0] !== 0 && r[0] !== 15) throw refusal(r[0]);
  return waitlistView(redis, voucherId, userId);
}

/** Leaves the waitlist (idempotent). An open offer is not given up by this: it expires and moves on. */
export async function leaveWaitlist(redis: RedisClient, voucherId: string, userId: string): Promise<WaitlistView> {
  await redis.zrem(waitKeys(voucherId).waitlist, userId);
  return waitlistView(redis, voucherId, userId);
}

/** The sale's waitlist and, with a user, their place or offer; one MULTI in one slot, Redis' clock. */
export async function waitlistView(redis: RedisClient, voucherId: string, userId: string | null): Promise<WaitlistView> {
  const w = waitKeys(voucherId);
  const m = redis.multi().zcard(w.waitlist);
  if (userId) {
    m.zrank(w.waitlist, userId).zscore(w.offers, userId).time();
    m.hmget(keys.seckillMeta(waitTag(voucherId)), 'room', 'roomUntil').sismember(keys.roomPassed(voucherId), userId);
  }
  const res = await m.exec();
  if (!res) throw new Error('redis transaction aborted');
  for (const [err] of res) if (err) throw err;
  const view: WaitlistView = { waiting: Number(res[0]![1]), offerMs: env.WAITLIST_OFFER_MS, me: null };
  if (!userId) return view;
  const rank = res[1]![1] as number | null;
  const expires = res[2]![1] as string | null;
  const [s, us] = res[3]![1] as [string, string];
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  const expiresInMs = expires === null ? 0 : Number(expires) - now;
  const [room, roomUntil] = res[4]![1] as [string | null, string | null];
  view.gate = room === '1' && (roomUntil === null || now < Number(roomUntil)) && res[5]![1] === 0;
  if (expiresInMs > 0) view.me = { state: 'offered', expiresInMs };
  else if (rank !== null) view.me = { state: 'waiting', position: rank + 1 };
  else view.me = { state: 'none' };
  return view;
}

/**
 * Claims this user's open offer: an order, like an accepted grab, answered once the broker
 * confirmed the order message (200 `pending`), or 503 if it did not, with the offer given back to
 * this user for the retry (the grab's own giveBackUnconfirmed decides; lua/seckill-release-8.lua).
 */
export async function claimOffer(db: DB, redis: RedisClient, voucherId: string, userId: string): Promise<GrabResult> {
  const t = waitTag(voucherId);
  const w = waitKeys(voucherId);
  const orderId = await nextOrderId(redis);
  const [code, , third, expires] = await runScript<[number, string?, (string | number)?, (string | number)?]>(
    redis,
    'seckill-offer-claim',
    [keys.seckillMeta(t), keys.seckillBuyers(t), keys.seckillPending(t), w.offers, w.stats, keys.seckillForfeit(t)],
    [voucherId, userId, orderId],
  );
  if (code !== 0) throw refusal(code);
  const at = Number(third);
  if (!Number.isSafeInteger(at) || at <= 0) throw new Error(`claim script returned no acceptance time: ${String(third)}`);
  const msg: OrderMessage = { v: 1, orderId, userId, voucherId, at };
  try {
    await publishSoon(msg);
  } catch (err) {
    // Not published: the unit goes back as the offer it was, so the claim the 503 says to retry can succeed.
    return giveBackUnconfirmed(db, redis, msg, err, Number.isSafeInteger(Number(expires)) ? Number(expires) : undefined);
  }
  return { orderId, status: 'pending' };
}
