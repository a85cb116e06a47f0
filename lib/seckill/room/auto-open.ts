/**
 * The waiting room opens by itself (docs/fair-sale.md#opening-by-itself): when this web process
 * sheds an ordinary sale's grabs (its admission limit is full: arrivals exceed what the box serves,
 * measured, lib/hot/admission-limit.ts) ROOM_AUTO_SHED_PER_SECOND times within a second, the sale's
 * meta gets `room` + `roomUntil` (lua/seckill-room-open-3.lua): grabs then need a grab token from
 * the room until ROOM_AUTO_OPEN_MS after the last such second. Counting is plain numbers per
 * voucher and second; at most one Redis call per voucher and second per process.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { roomMetrics } from '@/lib/seckill/room/metrics';
import { bucketCount } from '@/lib/seckill/buckets/count';

const MAX_VOUCHERS = 1000;
const sheds = new Map<string, { second: number; n: number; askedAt: number }>();

/** Opens (or keeps open) the sale's room for `ms`; false when it is the merchant's room, ended or unknown. */
export async function openRoomByItself(redis: RedisClient, voucherId: string, ms = env.ROOM_AUTO_OPEN_MS): Promise<boolean> {
  // A bucketed sale (docs/buckets.md) is never roomed: its grabs read their home bucket's meta,
  // and the room's flag would reach bucket 0's users only.
  if ((await bucketCount(redis, voucherId)) > 1) return false;
  const opened = (await runScript<number>(redis, 'seckill-room-open', [keys.seckillMeta(voucherId), keys.roomState(voucherId), keys.seckillBuyers(voucherId)], [ms])) === 1;
  if (opened) roomMetrics.autoOpened();
  return opened;
}

/** The hot server shed a grab of `voucherId` (raw from the URL; anything but an id is ignored). */
export function grabShed(redis: RedisClient, voucherId: string | undefined, now = Date.now()): void {
  const threshold = env.ROOM_AUTO_SHED_PER_SECOND;
  if (threshold <= 0 || !voucherId || !/^[1-9]\d{0,18}$/.test(voucherId)) return;
  const second = Math.floor(now / 1000);
  let s = sheds.get(voucherId);
  if (!s) {
    if (sheds.size >= MAX_VOUCHERS) sheds.clear();
    sheds.set(voucherId, (s = { second, n: 0, askedAt: 0 }));
  } else if (s.second !== second) {
    s.second = second;
    s.n = 0;
  }
  if (++s.n < threshold || now - s.askedAt < 1000) return;
  s.askedAt = now;
  openRoomByItself(redis, voucherId).catch((err: unknown) => log.warn({ voucherId, err: err instanceof Error ? err.message : String(err) }, 'could not open the waiting room'));
}
