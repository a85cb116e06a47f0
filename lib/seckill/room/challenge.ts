/** A room sale's bot-gate challenge, at the cost its merchant set (docs/fair-sale.md#the-bot-gate). */
import type { Challenge } from 'altcha-lib/types';
import type { Executor } from '@/lib/db/client';
import { AppError } from '@/lib/errors';
import { findRoom } from '@/lib/seckill/room/room.repository';
import { newChallenge } from '@/lib/seckill/room/pow';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import type { RoomView } from '@/lib/seckill/room/room';

async function openByItself(redis: RedisClient, voucherId: string): Promise<boolean> {
  const [room, until] = await redis.hmget(keys.seckillMeta(voucherId), 'room', 'roomUntil');
  return room === '1' && until !== null && Number(until) > Date.now();
}

// The cost is set at creation and never changes: one MySQL read per sale and process (bounded),
// shared by the admitted who ask at once (the first of a sale's start would otherwise each read it).
const costs = new Map<string, Promise<number | null>>();

function roomCost(db: Executor, voucherId: string): Promise<number | null> {
  let cost = costs.get(voucherId);
  if (!cost) {
    if (costs.size >= 10_000) costs.clear();
    cost = findRoom(db, voucherId).then((room) => room?.powCost ?? null);
    // A failed read (or a sale that is not a merchant's room yet) is asked again next time.
    const mine = cost;
    const forget = () => {
      if (costs.get(voucherId) === mine) costs.delete(voucherId);
    };
    void cost.then((c) => (c === null ? forget() : undefined), forget);
    costs.set(voucherId, cost);
  }
  return cost;
}

export async function roomChallenge(db: Executor, redis: RedisClient, voucherId: string, userId: string): Promise<Challenge> {
  const cost = await roomCost(db, voucherId);
  if (cost !== null) return newChallenge(voucherId, userId, cost);
  // A room that opened by itself (docs/fair-sale.md#opening-by-itself) costs the default.
  if (await openByItself(redis, voucherId)) return newChallenge(voucherId, userId, env.ROOM_POW_COST);
  throw new AppError('NOT_FOUND', '该秒杀无需排队');
}

/**
 * The view with the gate's challenge once admitted (RoomView.challenge), or while waiting too when
 * `waitingToo` (a join's answer: the challenge to solve while waiting); as it is otherwise. The
 * challenge is a convenience: when it cannot be made (MySQL slow or down, a room that opened by
 * itself lapsing meanwhile) the admission is answered without it, never turned into an error (the
 * client asks GET …/challenge, as the page does).
 */
export async function withChallenge(db: Executor, redis: RedisClient, voucherId: string, userId: string, view: RoomView, waitingToo = false): Promise<RoomView> {
  if (view.state !== 'admitted' && !(waitingToo && view.state === 'waiting')) return view;
  try {
    // A copy (the view may be shared by parked looks), not a spread: see room.ts's view().
    return Object.assign({}, view, { challenge: await roomChallenge(db, redis, voucherId, userId) });
  } catch (err) {
    log.warn({ err: (err as Error).message, voucherId }, 'room: admitted without the gate challenge in the answer');
    return view;
  }
}
