/**
 * Turns for buying on admission (docs/fair-sale.md#in-turn), kept in Redis, so the buyers of every
 * web process stand in one line: an admitted buyer's grab does not take a unit before the grabs of
 * the places ahead of theirs that are still due.
 *
 * A place is *due* when its holder asked to buy but could not buy yet (admitted with the gate's
 * challenge still to solve, or waiting: `keepTurn`). For ROOM_TURN_MS from its admission (for a
 * waiting place: from the first moment a later place's grab is weighed, which is after its
 * admission), a grab in turn of a later place is **parked** in Redis by the grab script
 * (lua/seckill-grab-16.lua) until that place has bought, left (`leaveTurn`) or run out of its
 * moment. The call that clears the way — the grab of the place ahead, its leaving, or any later
 * call once the moment is over — runs the parked grabs itself, in place order, in the same script:
 * nothing waits on a web process's event loop between one winner's grab and the next, and the
 * orders are stamped with the script's clock in place order whichever process each buyer is on.
 *
 * **A place has one moment per sale**: keeping it again never extends it, and a place whose moment
 * ended, that bought or left is not kept again — a holder who never comes back delays the places
 * behind by at most ROOM_TURN_MS, once; moments run side by side, not one after another. With holds
 * the unit is the admitted user's either way: turns decide only the order in which the winners'
 * orders are made.
 *
 * A buyer who asked before the start has no final place until the shuffle: kept by user, placed by
 * the first grab in turn after it. The parked grab's caller learns its result from the script's
 * reply (it ran in its own call), or from the results hash: each script that runs parked grabs
 * publishes the voucher id on `seckill:turns`, and every process with buyers waiting reads theirs
 * (one HMGET per sale), also every POLL_MS in case a message was missed. A grab still parked when
 * every moment ahead must have ended is taken back (503, retry), so a lost message or a Redis that
 * lost the line costs a retry, never a unit or a hang.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { subscribeTrusted } from '@/lib/redis/subscriber';
import { bucketCount, knownBucketCount } from '@/lib/seckill/buckets/count';
import { runGrabScript, type GrabReply } from '@/lib/seckill/grab-script';

/** Places (and, before the start, users) due per sale at most: beyond them a turn is not kept (nobody waits for it). */
export const MAX_DUE = 10_000;
/** How often a process with parked buyers of a sale looks for their results and clears the way (a moment that ended). */
const POLL_MS = 200;
/** A parked grab is taken back this long after the latest its way could clear (its blocker's moment, then a full moment for a place ahead kept later). */
const SLACK_MS = 2_000;

const TURN_LATER = 15;
const TAKEN_BACK = 16;
const RAN = 17;

/** Turns apply with ROOM_TURN_MS > 0 to a sale in one bucket (its grabs in the room's slot). Synchronous when the count is known. */
function inTurns(redis: RedisClient, voucherId: string): boolean | Promise<boolean> {
  return inTurnsKnown(voucherId) ?? bucketCount(redis, voucherId).then((c) => c === 1);
}

/** Whether the sale's grabs go in turn when that is known without Redis (null: ask inTurns). */
export function inTurnsKnown(voucherId: string): boolean | null {
  if (env.ROOM_TURN_MS <= 0) return false;
  const n = knownBucketCount(voucherId);
  return n === null ? null : n === 1;
}

/** Calls `send` now when the sale's bucket count is known (so it goes out before the caller's next command), else after reading it. */
function whenInTurns(redis: RedisClient, voucherId: string, send: () => Promise<unknown>): Promise<void> {
  const on = inTurns(redis, voucherId);
  const sent = on === true ? send() : on === false ? null : on.then((yes) => (yes ? send() : null));
  // A turn not kept or not left costs order (or a moment's wait), never a unit.
  return Promise.resolve(sent).then(
    () => undefined,
    () => undefined,
  );
}

/**
 * This buyer asked to buy and will, once through the gate (`admitted`: their moment starts now) or
 * at their turn (waiting: its moment starts once a later place's grab is weighed). `place` null:
 * before the start, kept by user until the shuffle. Sent before the caller's next command on the
 * same connection when the sale's bucket count is known (it is, once the sale was looked at).
 */
export function keepTurn(redis: RedisClient, voucherId: string, place: number | null, userId: string, admitted: boolean): Promise<void> {
  if (place !== null && (!Number.isSafeInteger(place) || place < 1)) return Promise.resolve();
  return whenInTurns(redis, voucherId, () =>
    runScript<number>(
      redis,
      'seckill-turn-keep',
      [keys.seckillMeta(voucherId), keys.turnDue(voucherId), keys.turn(voucherId), keys.turnEarly(voucherId)],
      [place ?? '', userId, admitted ? '1' : '0', env.ROOM_TURN_MS, MAX_DUE],
    ),
  );
}

/** This buyer is done with their turn without a grab in turn (took the token route, failed before it): the grabs parked behind them go now. */
export function leaveTurn(redis: RedisClient, voucherId: string, place: number | null): Promise<void> {
  if (place === null || !Number.isSafeInteger(place) || place < 1) return Promise.resolve();
  return whenInTurns(redis, voucherId, () => runGrabScript(redis, { voucherId, userId: '0', orderId: '0', turn: { mode: 'f', place } }));
}

interface Waiter {
  userId: string;
  place: number;
  /** Taken back (or asked) at this moment (epoch ms). */
  deadline: number;
  resolve: (reply: GrabReply) => void;
  reject: (err: unknown) => void;
}

interface Line {
  /**
   * By the grab's order id, as the script stores the results: a result nobody read (its process
   * died, or it answered another request) never answers another grab of the same user. A second
   * request of a user replaces the first's parked grab at their place; the first hears "taken back".
   */
  waiters: Map<string, Waiter>;
  timer?: NodeJS.Timeout;
  busy: boolean;
  /** A message arrived while a look was under way: look again after it. */
  again: boolean;
}

const g = globalThis as unknown as { __hmdpTurnLines?: Map<string, Line>; __hmdpTurnsHeard?: WeakSet<RedisClient> };
// Shared by the web server's own import and the Next build's copy of this module.
const lines = (g.__hmdpTurnLines ??= new Map<string, Line>());
const heard = (g.__hmdpTurnsHeard ??= new WeakSet<RedisClient>());

/**
 * The reply of a grab the script parked (`blockedMs`: the moment of the place ahead ends within it
 * at the latest): the grab's own reply once a call ran it, or TURN_TAKEN_BACK (16) when it was
 * still parked at its deadline and taken back unrun. Rejects with a 503 when Redis no longer knows
 * it (lost, or unreachable at the deadline): it may have run, so nothing is given back.
 */
export function awaitTurn(redis: RedisClient, voucherId: string, userId: string, orderId: string, place: number, blockedMs: number): Promise<GrabReply> {
  listen(redis);
  const wait = Number.isFinite(blockedMs) && blockedMs > 0 ? blockedMs : 0;
  return new Promise<GrabReply>((resolve, reject) => {
    let line = lines.get(voucherId);
    if (!line) {
      line = { waiters: new Map(), busy: false, again: false };
      lines.set(voucherId, line);
    }
    line.waiters.set(orderId, { userId, place, deadline: Date.now() + wait + env.ROOM_TURN_MS + SLACK_MS, resolve, reject });
    schedule(redis, voucherId, line, Math.min(POLL_MS, wait + 5));
  });
}

function listen(redis: RedisClient): void {
  if (heard.has(redis)) return;
  heard.add(redis);
  subscribeTrusted(
    redis,
    'grab turns',
    keys.seckillTurns(),
    (voucherId) => {
      const line = lines.get(voucherId);
      if (line) void look(redis, voucherId, line, false);
    },
    // Untrusted (a message may have been missed): the poll still finds every result.
    () => undefined,
  );
}

function schedule(redis: RedisClient, voucherId: string, line: Line, ms: number): void {
  if (line.timer) return;
  line.timer = setTimeout(() => {
    line.timer = undefined;
    void look(redis, voucherId, line, true);
  }, Math.max(1, ms));
  line.timer.unref();
}

/**
 * Reads the results of this process's parked buyers of one sale (one HMGET), after clearing the
 * way (`clear`: a flush call runs the parked grabs whose blocker's moment ended); takes back those
 * past their deadline. One look per sale at a time.
 */
async function look(redis: RedisClient, voucherId: string, line: Line, clear: boolean): Promise<void> {
  if (line.busy) {
    line.again = true;
    return;
  }
  line.busy = true;
  let next = POLL_MS;
  try {
    if (clear) {
      const r = await runGrabScript(redis, { voucherId, userId: '0', orderId: '0', turn: { mode: 'f' } });
      if (r[0] === TURN_LATER && r[2] !== null && r[2] !== undefined) next = Math.min(POLL_MS, Number(r[2]) + 5);
    }
    const ids = [...line.waiters.keys()];
    if (ids.length > 0) {
      const got = await redis.hmget(keys.turnResults(voucherId), ...ids);
      const found = ids.filter((_, i) => got[i] !== null);
      if (found.length > 0) await redis.hdel(keys.turnResults(voucherId), ...found);
      ids.forEach((u, i) => {
        const w = line.waiters.get(u);
        if (got[i] === null || !w) return;
        line.waiters.delete(u);
        w.resolve(decode(got[i]!));
      });
    }
  } catch {
    // Redis away: the next look, or the deadline, decides.
  }
  const now = Date.now();
  for (const [u, w] of line.waiters) {
    if (w.deadline > now) continue;
    line.waiters.delete(u);
    takeBack(redis, voucherId, u, w);
  }
  line.busy = false;
  if (line.again) {
    line.again = false;
    next = 0;
  }
  if (line.waiters.size > 0) schedule(redis, voucherId, line, next);
  else if (!line.timer) lines.delete(voucherId);
}

/** Past every moment that could hold it: taken back if still parked (nothing bought), else its result. */
function takeBack(redis: RedisClient, voucherId: string, orderId: string, w: Waiter): void {
  runGrabScript(redis, { voucherId, userId: w.userId, orderId, turn: { mode: 'c', place: w.place } }).then(
    (r) => {
      if (r[0] === TAKEN_BACK) w.resolve([TAKEN_BACK]);
      else if (r[0] === RAN && typeof r[1] === 'string') w.resolve(decode(r[1]));
      else w.reject(unknownOutcome());
    },
    () => w.reject(unknownOutcome()),
  );
}

/** A parked grab's result as the script stored it: its reply's fields joined by newlines ('' for false). */
function decode(s: string): GrabReply {
  const [code, ...rest] = s.split('\n');
  const fields = rest.map((x) => (x === '' ? undefined : x));
  return [Number(code), fields[0], fields[1]];
}

const unknownOutcome = () => new AppError('SERVICE_UNAVAILABLE', '网络繁忙，抢购结果未能确认，请稍后查看订单或重试', { retryAfter: 1 });

/** For tests: buyers of this sale waiting for their turn in this process. */
export function parkedHere(voucherId: string): number {
  return lines.get(voucherId)?.waiters.size ?? 0;
}

