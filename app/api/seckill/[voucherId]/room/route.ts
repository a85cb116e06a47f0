import { z } from 'zod';
import { route } from '@/lib/http/route';
import { expectNoBody, parseId, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { lookRoom, lookRoomWithSnapshot, soldOutFromMemory } from '@/lib/seckill/room/room';
import { park } from '@/lib/seckill/room/park';
import { withChallenge } from '@/lib/seckill/room/challenge';

const lookQuery = z.object({
  /** Wait up to this long (ms) for the moment this ticket is admitted, the sale sells out or ends (a long poll). */
  wait: z.coerce.number().int().min(0).max(60_000).default(0),
});

/**
 * 已抢光 is the same answer for everyone and final: once this process knows it (soldOutFromMemory),
 * a join or look is answered before the session is read or the visitor counted, so the crowd that
 * arrives after the last unit costs the box no Redis at all (docs/fair-sale.md#sold-out).
 */
const soldOut = (params: Record<string, string>) => soldOutFromMemory(redis, params.voucherId ?? '') ?? undefined;

/**
 * The waiting room of a room sale (docs/fair-sale.md#the-waiting-room). POST joins (idempotent:
 * the same user keeps the same place), GET looks: `{ state: none|waiting|admitted|soldout,
 * position, ahead, estimateMs, shuffled, issued, served, beginTime, ticket }`. `GET ?wait=ms`
 * answers a waiting ticket when it is admitted, the sale sells out or ends, or the wait (at most
 * ROOM_LONG_POLL_MS) runs out, whichever comes first (docs/fair-sale.md#waiting-without-polling).
 * An admitted answer carries the bot gate's challenge (`challenge`, as GET …/challenge gives it).
 */
export const GET = route({ auth: 'user', known: soldOut }, async ({ req, params, user, admission }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  const { wait } = parseQuery(req, lookQuery);
  await consume('roomUser', user.id);
  const { view, snap } = await lookRoomWithSnapshot(db, redis, voucherId, user.id, false);
  if (wait === 0 || snap === null) return withChallenge(db, redis, voucherId, user.id, view);
  const out = park(db, redis, voucherId, user.id, view, snap, wait);
  // Parked: waiting on the room's clock, not on the box's work.
  if (out instanceof Promise) admission?.detach();
  return withChallenge(db, redis, voucherId, user.id, await out);
});

export const POST = route({ auth: 'user', known: soldOut }, async ({ req, params, user }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  await expectNoBody(req);
  await consume('roomUser', user.id);
  return withChallenge(db, redis, voucherId, user.id, await lookRoom(db, redis, voucherId, user.id, true));
});
