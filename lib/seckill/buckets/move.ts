/**
 * Moving unsold stock between the buckets of one flash sale (docs/buckets.md#moving-stock).
 *
 * The two buckets are two hash slots, maybe two masters: no script can touch both. So a move is
 *   1. take   (donor, lua/seckill-bucket-take-3.lua): stock and the bucket's initial −k, journal
 *             moves-out[id] = "<to>:<k>", in one atomic step;
 *   2. give   (recipient, lua/seckill-bucket-give-3.lua): +k once per id (moves-in remembers it);
 *   3. clear  (donor): HDEL moves-out[id].
 * A process dying between any two steps leaves the entry in the journal: recoverMoves delivers
 * it (step 2 is idempotent) and clears it. Until then the k units are "in flight": in no bucket's
 * initial, counted by the invariants and by a repair. Moves, recovery and a bucketed preheat run
 * under one lock per voucher, so a preheat reading every bucket's share sees no move half done
 * except ones whose mover died (which the journal shows).
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { LockTimeoutError, withLock } from '@/lib/lock';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { bucketTag } from '@/lib/seckill/buckets/tags';

/** How long a mover may hold the voucher's move lock before others may take over (its watchdog renews it). */
export const MOVE_LEASE_MS = 2000;

export const moveLockName = (vid: string) => `seckill-buckets:${vid}`;

/** How long a grab waits for another grab's move (a move is two scripts and an HDEL, about 1 ms). */
export const MOVE_WAIT_MS = 100;

export interface JournalEntry {
  id: string;
  from: number;
  to: number;
  units: number;
}

export const newMoveId = () => `${Date.now().toString(36)}.${randomBytes(6).toString('hex')}`;

/** Step 1: takes up to `want` units out of bucket `from` for bucket `to`; the units taken (0: none to give). */
export function takeUnits(redis: RedisClient, vid: string, n: number, from: number, to: number, id: string, want: number): Promise<number> {
  const t = bucketTag(vid, from, n);
  return runScript<number>(redis, 'seckill-bucket-take', [keys.seckillMeta(t), keys.seckillStock(t), keys.seckillMovesOut(t)], [id, want, to]);
}

/** Steps 2 and 3: delivers a journaled move and clears the journal; false when the recipient is not preheated (stays in flight). */
export async function deliverMove(redis: RedisClient, vid: string, n: number, m: JournalEntry): Promise<boolean> {
  const to = bucketTag(vid, m.to, n);
  const r = await runScript<number>(redis, 'seckill-bucket-give', [keys.seckillMeta(to), keys.seckillStock(to), keys.seckillMovesIn(to)], [m.id, m.units]);
  if (r < 0) return false;
  await redis.hdel(keys.seckillMovesOut(bucketTag(vid, m.from, n)), m.id);
  return true;
}

/**
 * The move seqlock (keys.seckillMoveSeq): a mover makes it odd before its first step and even after
 * its last, under the move lock. A mover that died left it odd: the next mover or recovery (under
 * the lock, so no live mover) brings it back to even once the journal is delivered.
 */
export async function seqTo(redis: RedisClient, vid: string, parity: 0 | 1): Promise<void> {
  const k = keys.seckillMoveSeq(vid);
  if ((await redis.incr(k)) % 2 !== parity) await redis.incr(k);
}

export async function readMoveSeq(redis: RedisClient, vid: string): Promise<number> {
  return Number((await redis.get(keys.seckillMoveSeq(vid))) ?? 0);
}

/** Every journaled (taken, not yet known delivered) move of the sale. */
export async function journaledMoves(redis: RedisClient, vid: string, n: number): Promise<JournalEntry[]> {
  const journals = await Promise.all(Array.from({ length: n }, (_, b) => redis.hgetall(keys.seckillMovesOut(bucketTag(vid, b, n)))));
  const out: JournalEntry[] = [];
  journals.forEach((j, from) => {
    for (const [id, v] of Object.entries(j)) {
      const [to, units] = v.split(':').map(Number);
      if (Number.isInteger(to) && Number.isInteger(units)) out.push({ id, from, to: to!, units: units! });
    }
  });
  return out;
}

/** The journaled moves whose units are in no bucket yet (not delivered): what a repair must not hand out twice. */
export async function movesInFlight(redis: RedisClient, vid: string, n: number): Promise<JournalEntry[]> {
  const moves = await journaledMoves(redis, vid, n);
  const delivered = await Promise.all(moves.map((m) => redis.sismember(keys.seckillMovesIn(bucketTag(vid, m.to, n)), m.id)));
  return moves.filter((_, i) => delivered[i] === 0);
}

/** Finishes every journaled move (a mover that died between the steps); returns how many were finished. */
export async function recoverMoves(redis: RedisClient, vid: string, n: number): Promise<number> {
  if (n <= 1) return 0;
  // Nothing journaled (the usual answer): no lock taken.
  if ((await journaledMoves(redis, vid, n)).length === 0) return 0;
  return withLock(moveLockName(vid), { leaseMs: MOVE_LEASE_MS, waitMs: 5000 }, async () => {
    let done = 0;
    const moves = await journaledMoves(redis, vid, n);
    for (const m of moves) if (await deliverMove(redis, vid, n, m)) done++;
    if (done === moves.length) await seqTo(redis, vid, 0); // nothing half done any more
    return done;
  });
}

/**
 * One move into bucket `to` from the richest of `donors` (bucket index → unsold units): half its
 * units, at least one. Waits for the lock at most MOVE_WAIT_MS: a busy lock means another move
 * (maybe into this very bucket) or a repair is under way. Returns the units moved (0 when the
 * home bucket had stock again by then, or no donor had any), or null when the lock stayed busy.
 */
export async function moveInto(redis: RedisClient, vid: string, n: number, to: number, donors: Map<number, number>): Promise<number | null> {
  const r = withLock(moveLockName(vid), { leaseMs: MOVE_LEASE_MS, waitMs: MOVE_WAIT_MS }, async () => {
    // While this waited, another grab of the same home may have moved stock in: nothing to do then.
    if (Number(await redis.get(keys.seckillStock(bucketTag(vid, to, n)))) > 0) return 0;
    const ranked = [...donors].filter(([b, s]) => b !== to && s > 0).sort((a, b) => b[1] - a[1]);
    await seqTo(redis, vid, 1);
    try {
      for (const [from, seen] of ranked.slice(0, 2)) {
        const m: JournalEntry = { id: newMoveId(), from, to, units: 0 };
        m.units = await takeUnits(redis, vid, n, from, to, m.id, Math.ceil(seen / 2));
        if (m.units === 0) continue; // sold meanwhile: the next richest
        if (!(await deliverMove(redis, vid, n, m))) return 0; // the recipient is not preheated: stays journaled (and odd)
        return m.units;
      }
      return 0;
    } finally {
      // Even again only when nothing of ours is left half done (a throw or an undelivered move keeps it odd).
      if ((await journaledMoves(redis, vid, n)).length === 0) await seqTo(redis, vid, 0);
    }
  });
  return r.catch((err: unknown) => {
    if (err instanceof LockTimeoutError) return null;
    throw err;
  });
}
