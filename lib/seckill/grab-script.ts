/** The grab script's call (lua/seckill-grab-16.lua): its keys in the voucher's (or bucket's) slot, its arguments. */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

export type GrabReply = [number, string?, (string | number)?];

/**
 * The grab script (also used by tests and the drain bench to record an order as a grab would).
 * `turn`: a grab in turn ('g', parked behind a due place ahead), or, with no grab, running the
 * parked grabs whose way is clear ('f', after leaving `place`'s turn if set) or taking back
 * `place`'s parked grab ('c'): lib/seckill/room/turns.ts.
 */
export function runGrabScript(
  redis: RedisClient,
  o: { voucherId: string; userId: string; orderId: string; ip?: string; limits?: { user: number; ip: number }; nonce?: string; tag?: string; turn?: { mode: 'g' | 'f' | 'c'; place?: number } },
): Promise<GrabReply> {
  const v = o.voucherId;
  // The user's home bucket's tag (lib/seckill/buckets); the voucher id itself for N = 1.
  const t = o.tag ?? v;
  return runScript<GrabReply>(
    redis,
    'seckill-grab',
    [
      keys.seckillMeta(t),
      keys.seckillStock(t),
      keys.seckillBuyers(t),
      keys.seckillPending(t),
      keys.seckillRateUser(t, o.userId),
      keys.seckillRateIp(t, o.ip ?? '-'),
      keys.seckillForfeit(t),
      keys.seckillReserved(t),
      keys.seckillWinners(t),
      keys.seckillSpent(t),
      keys.turnDue(t),
      keys.turn(t),
      keys.turnParked(t),
      keys.turnResults(t),
      keys.turnEarly(t),
      keys.roomQueue(t),
    ],
    [v, o.userId, o.orderId, o.limits?.user ?? 0, o.limits?.ip ?? 0, o.nonce ?? '', o.turn?.mode ?? '', o.turn?.place ?? '', env.ROOM_TURN_MS, keys.seckillTurns()],
  );
}
