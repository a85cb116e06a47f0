/** A room sale's counts for the console's live page (docs/fair-sale.md#per-sale-numbers). */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';

export interface RoomNumbers {
  /** Tickets issued. */
  tickets: number;
  /** Places the serving counter has admitted, as of its last move (a look moves it). */
  admitted: number;
  /** Users through the bot gate (the room's or the waitlist's). */
  passed: number;
}

/** Null when the sale is not behind a waiting room now (never was, or a room it opened by itself has lapsed). One MULTI in the sale's slot. */
export async function roomNumbers(redis: RedisClient, voucherId: string, now = Date.now()): Promise<RoomNumbers | null> {
  const res = await redis.multi().hmget(keys.seckillMeta(voucherId), 'room', 'roomUntil').hmget(keys.roomState(voucherId), 'seq', 'served').scard(keys.roomPassed(voucherId)).exec();
  if (!res) throw new Error('redis transaction aborted');
  for (const [err] of res) if (err) throw err;
  const [room, until] = res[0]![1] as (string | null)[];
  if (room !== '1' || (until && Number(until) <= now)) return null;
  const [seq, served] = (res[1]![1] as (string | null)[]).map((v) => Number(v ?? 0));
  const tickets = seq!;
  return { tickets, admitted: Math.min(tickets, Math.floor(served!)), passed: Number(res[2]![1]) };
}
