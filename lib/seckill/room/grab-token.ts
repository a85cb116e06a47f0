/**
 * From the room to the grab (docs/fair-sale.md#the-grab-token): an admitted ticket whose holder
 * solved the bot gate gets a short-lived one-time grab token and the grab URL it makes. The gate is
 * solved once per user and sale (remembered in the room's `passed` set): a user whose grab was
 * answered 503 asks for a fresh token without solving again. The token carries the epoch of the
 * sale's copy in Redis (docs/fair-sale.md#a-redis-loss-in-the-room): a token minted before Redis lost
 * the sale is refused by the grab after it, as the room itself was forgotten.
 */
import type { DB } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { lookRoomWithSnapshot } from '@/lib/seckill/room/room';
import { needTicket } from '@/lib/seckill/room/room-memory';
import { checkSolution } from '@/lib/seckill/room/pow';
import { issueGrabToken, newEpoch, SPEND_NOW_NONCE, verifyTicket } from '@/lib/seckill/room/tokens';
import { runScript } from '@/lib/redis/scripts';
import { homeTag } from '@/lib/seckill/buckets/count';
import { roomMetrics } from '@/lib/seckill/room/metrics';
import { countSaleChallenge } from '@/lib/seckill/sale-metrics';
import { grabVoucher, type GrabResult } from '@/lib/seckill/grab';
import { keepTurn, leaveTurn } from '@/lib/seckill/room/turns';

export interface GrabPass {
  token: string;
  /** POST here to grab (the token is in it). */
  grabUrl: string;
  expiresAt: number;
}

/** The grab pass the token route answers, and the token's `<epoch>.<nonce>` for a grab made there at once. */
export async function mintGrabPass(db: DB, redis: RedisClient, voucherId: string, userId: string, input: { ticket: string; altcha?: string }): Promise<{ pass: GrabPass; nonce: string }> {
  // Without Redis: a caller that never stood in the room has no ticket of its own.
  if (!verifyTicket(input.ticket, voucherId, userId)) throw needTicket();
  const { view, snap } = await lookRoomWithSnapshot(db, redis, voucherId, userId, false);
  if (view.state === 'soldout') throw new AppError('SOLD_OUT', '已抢光');
  if (view.state !== 'admitted') throw new AppError('NOT_ADMITTED', view.state === 'none' ? '请先排队' : `还没轮到你，前面还有 ${view.ahead ?? 0} 人`);
  // The look's snapshot has the sale's end (a sold-out answer from memory has none, and throws above).
  await passGate(redis, voucherId, userId, input.altcha, true, snap?.end);
  // This buyer grabs through the grab URL, not in turn: the places behind need not wait for them.
  void leaveTurn(redis, voucherId, view.position);
  return issueToken(redis, voucherId, userId);
}

/**
 * The bot gate for this user and sale: passed before (the room's `passed` set), or now by spending
 * `altcha` (one solution, once; POW_FAILED otherwise). Passing is remembered until an hour after the
 * sale's end (`end`, read from Redis when the caller has no snapshot of it). The solution is checked
 * here without Redis; the set, the one-time mark and the pass are one script (one round trip).
 * `saleFound`: the caller's look found the sale in Redis (the proof then counts for it).
 */
export async function passGate(redis: RedisClient, voucherId: string, userId: string, altcha: string | undefined, saleFound: boolean, end?: number): Promise<void> {
  const solution = gateSolution(altcha, voucherId, userId);
  const until = end ?? (await saleEndMs(redis, voucherId));
  const r = await runScript<number>(
    redis,
    'seckill-gate-pass',
    [keys.roomPassed(voucherId), keys.roomPowSpent(voucherId, solution?.challenge ?? '-')],
    [userId, solution?.ttlMs ?? 0, until + 3_600_000],
  );
  gateAnswered(voucherId, r, saleFound);
}

/** A solution checked without Redis, as the gate script spends it (a wrong one: ttl 0, only a pass from before counts); undefined when none was sent. */
export function gateSolution(altcha: string | undefined, voucherId: string, userId: string): { challenge: string; ttlMs: number } | undefined {
  if (altcha === undefined) return undefined;
  const s = checkSolution(altcha, voucherId, userId);
  return { challenge: s?.challenge ?? '-', ttlMs: s?.ttlMs ?? 0 };
}

/** The gate script's answer (lua/include/gate-pass.lua), counted (in all and for the sale, see countSaleChallenge); POW_FAILED unless passed. */
export function gateAnswered(voucherId: string, r: number, saleFound: boolean): void {
  if (r === PASSED_BEFORE) return;
  roomMetrics.challenge(r === PASSED_NOW);
  countSaleChallenge(voucherId, r === PASSED_NOW, saleFound);
  if (r !== PASSED_NOW) throw new AppError('POW_FAILED', '人机验证未通过，请重新验证');
}

const PASSED_BEFORE = 1;
const PASSED_NOW = 2;

/** A one-time grab token for this user and sale (the caller checked the admission and the gate). */
async function issueToken(redis: RedisClient, voucherId: string, userId: string): Promise<{ pass: GrabPass; nonce: string }> {
  // The epoch of the bucket the user grabs in (the grab script reads it from that meta).
  const epoch = await runScript<string | null>(redis, 'seckill-epoch', [keys.seckillMeta(await homeTag(redis, voucherId, userId))], [newEpoch()]);
  // Not preheated (Redis lost the sale since the look above): the next look rebuilds it.
  if (!epoch) throw new AppError('SERVICE_UNAVAILABLE', '服务繁忙，请稍后再试', { retryAfter: 1 });
  const t = issueGrabToken(voucherId, userId, env.ROOM_GRAB_TOKEN_TTL_MS, Date.now(), epoch);
  roomMetrics.tokenIssued();
  return { pass: { token: t.token, grabUrl: `/api/seckill/${voucherId}?g=${t.token}`, expiresAt: t.expiresAt }, nonce: t.nonce };
}

/**
 * Buying on admission (docs/fair-sale.md#buying-on-admission): the grab of an admitted visitor who
 * asked for it (`buy`) and has passed the gate, made by the look that learned of the admission,
 * with a token minted and spent by the grab. `passed`: true when this request passed the gate or
 * its look (in this same answer, not parked since) found it passed, false when that look found it
 * not, null to ask the passed set. Null when the gate is not passed: the look answers `admitted`
 * with the challenge, as without `buy`. The grab goes in turn (turns.ts): while a place ahead is due it is parked in Redis
 * and run, in place order, by the call that clears its way, so the grabs of every web process win
 * in place order. `kept`: this request's look already kept the turn as admitted. `onWait`: called
 * when the grab waits for its turn (the caller lets go of its in-flight slot).
 */
export async function buyOnAdmission(db: DB, redis: RedisClient, voucherId: string, userId: string, ip: string, passed: boolean | null, place: number | null, onWait?: () => void, kept = false): Promise<GrabResult | null> {
  // The turn is kept before the first round trip, so it reaches Redis before any grab sent after
  // this answer, in this process or another (a buyer still to solve the gate keeps it too: the
  // places behind wait a moment for their grab).
  if (place !== null && !kept) void keepTurn(redis, voucherId, place, userId, true);
  if (passed === false || (passed === null && (await redis.sismember(keys.roomPassed(voucherId), userId)) !== 1)) return null;
  if (place === null) return buy(db, redis, voucherId, userId, ip);
  let sent = false;
  try {
    return await buy(db, redis, voucherId, userId, ip, { place, onWait }, () => (sent = true));
  } finally {
    // The grab in turn ends the turn itself; a buyer who failed before it leaves it here.
    if (!sent) void leaveTurn(redis, voucherId, place);
  }
}

/**
 * The grab, in turn for a buyer with a place (docs/fair-sale.md#in-turn), with a token minted and
 * spent by the grab script itself: epoch `*` (SPEND_NOW_NONCE, lua/seckill-grab-16.lua), which no
 * signed token can carry. No epoch round trip: a token nobody holds cannot outlive a Redis loss,
 * and a sale Redis lost since the look is answered 503 by the grab (lib/seckill/grab.ts), never
 * grabbed in a rebuilt copy.
 */
function buy(db: DB, redis: RedisClient, voucherId: string, userId: string, ip: string, turn?: { place: number; onWait?: () => void }, sending?: () => void): Promise<GrabResult> {
  roomMetrics.tokenIssued();
  sending?.();
  return grabVoucher(db, redis, { voucherId, userId, ip, nonce: SPEND_NOW_NONCE, turn });
}

async function saleEndMs(redis: RedisClient, voucherId: string): Promise<number> {
  return Number(await redis.hget(keys.seckillMeta(voucherId), 'end')) || Date.now() + 24 * 3_600_000;
}
