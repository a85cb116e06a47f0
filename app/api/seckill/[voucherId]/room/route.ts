import { z } from 'zod';
import { requireOwnOrigin, route, type Admission, type KnownHeaders } from '@/lib/http/route';
import { parseId, parseOptionalJson, parseQuery } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { consume } from '@/lib/rate-limit';
import { fullFromMemory, lookRoomWithSnapshot, soldOutFromMemory, TICKET_HEADER } from '@/lib/seckill/room/room';
import { park } from '@/lib/seckill/room/park';
import { withChallenge } from '@/lib/seckill/room/challenge';
import { buyOnAdmission, gateAnswered, gateSolution } from '@/lib/seckill/room/grab-token';
import { inTurnsKnown, keepTurn, leaveTurn } from '@/lib/seckill/room/turns';
import type { RoomView } from '@/lib/seckill/room/room';

const lookQuery = z.object({
  /** Wait up to this long (ms) for the moment this ticket is admitted, the sale sells out or ends (a long poll). */
  wait: z.coerce.number().int().min(0).max(60_000).default(0),
  /** Buy on admission (docs/fair-sale.md#buying-on-admission): needs the gate passed before. */
  buy: z.literal('1', { error: 'buy 只能为 1' }).optional(),
});

const joinBody = z
  .object({
    /** The bot gate's solution (of the challenge the join's answer carries, or GET …/room/challenge's): passes the gate now, before the turn comes. */
    altcha: z.string().max(2048, '人机验证数据无效').optional(),
    /** Buy on admission (docs/fair-sale.md#buying-on-admission): now if admitted, else when the turn comes. */
    buy: z.literal(true, { error: 'buy 只能为 true' }).optional(),
    /** As the look's `wait`: a waiting join is held until its admission, the sell-out or the end. */
    wait: z.number({ error: 'wait 无效' }).int().min(0).max(60_000).optional(),
  })
  .strict()
  .default({});

interface Ask {
  join: boolean;
  wait: number;
  buy: boolean;
  altcha?: string;
}

/**
 * One look (or join) as asked: the gate passed with `altcha` (after the join: a bad solution keeps
 * the place, the same user joining again keeps it), held while waiting when `wait` > 0 (parked: no
 * slot of the hot server's in-flight limit), then, admitted and through the gate with `buy`, the
 * grab made here and answered as `purchase` (its refusals as the grab's errors, a 503 to retry);
 * otherwise the view, with the gate's challenge when admitted (and, on a join, while waiting).
 */
async function lookAndAnswer(voucherId: string, userId: string, ip: string, admission: Admission | undefined, ask: Ask): Promise<RoomView> {
  // The look, the gate's solution spent and the buyer's turn kept, in one round trip (the solution
  // is checked here first, without Redis). Turns whose use is not known yet here are kept below.
  const turns = ask.buy ? inTurnsKnown(voucherId) : false;
  const gate = gateSolution(ask.altcha, voucherId, userId);
  const { view, snap, done } = await lookRoomWithSnapshot(db, redis, voucherId, userId, ask.join, { buy: ask.buy, turns: turns === true, gate });
  const passing = ask.altcha !== undefined && view.state !== 'soldout';
  // Sold out by this process's memory while Redis still counted a unit (an invalidation on its way):
  // the turn the look kept would hold the places behind for nothing.
  if (view.state === 'soldout' && done.kept && view.position !== null) void leaveTurn(redis, voucherId, view.position);
  // Passing means a unit was left at the look, so the look spent the solution (done.gate >= 0).
  if (passing) gateAnswered(voucherId, done.gate, true);
  let seen = view;
  // Waiting and asking to buy: the turn is kept before the wait, so the place is due in Redis before
  // the counter can reach it and a later place's grab, on any web process, waits for it. After the
  // start the place is final (its moment starts once a later place's grab is weighed); before it,
  // kept by user until the shuffle. The look kept it when it could.
  if (ask.buy && view.state === 'waiting' && !done.kept && (view.position !== null || !view.shuffled)) {
    await keepTurn(redis, voucherId, view.shuffled ? view.position : null, userId, false);
  }
  if (ask.wait > 0 && snap !== null) {
    const out = park(db, redis, voucherId, userId, view, snap, ask.wait);
    // Parked: waiting on the room's clock, not on the box's work.
    if (out instanceof Promise) admission?.detach();
    seen = await out;
  }
  if (ask.buy && seen.state === 'admitted') {
    // Through the gate: this request passed it, or the look of this very answer (not parked since)
    // found it passed or not; after a wait, asked again (a Redis that lost the room meanwhile lost
    // the passed set too: the gate is solved again). The turn: kept as admitted by the look when it
    // saw the admission.
    const now = seen === view;
    const passed = passing ? true : now && done.passed >= 0 ? done.passed === 1 : null;
    // Waiting for the turn, like a parked look, waits on others, not on the box's work.
    const purchase = await buyOnAdmission(db, redis, voucherId, userId, ip, passed, seen.position, () => admission?.detach(), now && done.kept);
    // Null: the gate still to solve. buyOnAdmission kept the turn, so the places behind wait a
    // moment for this one's grab (docs/fair-sale.md#in-turn).
    if (purchase) return Object.assign({}, seen, { purchase });
  }
  return withChallenge(db, redis, voucherId, userId, seen, ask.join && !passing);
}

/**
 * 已抢光 is the same answer for everyone and final: once this process knows it (soldOutFromMemory),
 * a join or look is answered before the session is read or the visitor counted, so the crowd that
 * arrives after the last unit costs the box no Redis at all (docs/fair-sale.md#sold-out).
 */
const soldOut = (params: Record<string, string>) => soldOutFromMemory(redis, params.voucherId ?? '') ?? undefined;

/**
 * A join also hears 名额已满 from memory (every unit spoken for, docs/fair-sale.md#every-unit-spoken-for)
 * unless it shows a ticket of this sale (`x-room-ticket`: the page and the apps send the one they
 * hold, so a reload or the join with the gate's solution keeps the place); a look never does.
 */
const soldOutOrFull = (params: Record<string, string>, headers: KnownHeaders) =>
  soldOutFromMemory(redis, params.voucherId ?? '') ?? fullFromMemory(params.voucherId ?? '', headers.get(TICKET_HEADER)) ?? undefined;

/**
 * The waiting room of a room sale (docs/fair-sale.md#the-waiting-room). POST joins (idempotent:
 * the same user keeps the same place), GET looks: `{ state: none|waiting|admitted|soldout,
 * position, ahead, estimateMs, shuffled, issued, served, beginTime, ticket }`. `GET ?wait=ms`
 * answers a waiting ticket when it is admitted, the sale sells out or ends, or the wait (at most
 * ROOM_LONG_POLL_MS) runs out, whichever comes first (docs/fair-sale.md#waiting-without-polling).
 * An admitted answer carries the bot gate's challenge (`challenge`, as GET …/challenge gives it);
 * with `buy=1` and the gate passed, the purchase instead (docs/fair-sale.md#buying-on-admission).
 */
export const GET = route({ auth: 'user', known: soldOut }, async ({ req, params, user, caller, ip, admission }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  const { wait, buy } = parseQuery(req, lookQuery);
  // `buy=1` makes this GET a write (a purchase): from a cookie, only from our own pages.
  if (buy === '1') requireOwnOrigin(req, caller);
  await consume('roomUser', user.id);
  return lookAndAnswer(voucherId, user.id, ip, admission, { join: false, wait, buy: buy === '1' });
});

/**
 * Joins; the answer of a join with a place carries the gate's challenge. An optional body
 * `{ altcha, buy, wait }` passes the gate with its solution and asks to buy on admission: admitted
 * now, the answer is the purchase; waiting, with `wait` the join is held until the turn and then
 * buys, else a later look with `buy=1` does.
 */
export const POST = route({ auth: 'user', known: soldOutOrFull }, async ({ req, params, user, ip, admission }) => {
  const voucherId = parseId(params.voucherId, '优惠券 id');
  const input = await parseOptionalJson(req, joinBody);
  await consume('roomUser', user.id);
  if (input.altcha !== undefined) await consume('roomGateUser', user.id);
  return lookAndAnswer(voucherId, user.id, ip, admission, { join: true, wait: input.wait ?? 0, buy: input.buy === true, altcha: input.altcha });
});
