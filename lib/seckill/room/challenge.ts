/** A room sale's bot-gate challenge, at the cost its merchant set (docs/fair-sale.md#the-bot-gate). */
import type { Challenge } from 'altcha-lib/types';
import type { Executor } from '@/lib/db/client';
import { AppError } from '@/lib/errors';
import { findRoom } from '@/lib/seckill/room/room.repository';
import { newChallenge } from '@/lib/seckill/room/pow';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';

async function openByItself(redis: RedisClient, voucherId: string): Promise<boolean> {
  const [room, until] = await redis.hmget(keys.seckillMeta(voucherId), 'room', 'roomUntil');
  return room === '1' && until !== null && Number(until) > Date.now();
}

// The cost is set at creation and never changes: one MySQL read per sale and process (bounded).
const costs = new Map<string, number>();

export async function roomChallenge(db: Executor, redis: RedisClient, voucherId: string, userId: string): Promise<Challenge> {
  let cost = costs.get(voucherId);
  if (cost === undefined) {
    const room = await findRoom(db, voucherId);
    // A room that opened by itself (docs/fair-sale.md#opening-by-itself) costs the default.
    if (!room) {
      if (await openByItself(redis, voucherId)) return newChallenge(voucherId, userId, env.ROOM_POW_COST);
      throw new AppError('NOT_FOUND', '该秒杀无需排队');
    }
    if (costs.size >= 10_000) costs.clear();
    costs.set(voucherId, (cost = room.powCost));
  }
  return newChallenge(voucherId, userId, cost);
}
