/**
 * A grab refused SOLD_OUT by its home bucket while other buckets may still have stock
 * (docs/buckets.md#sold-out-is-the-sum): look at every bucket, move stock home, ask again — a few
 * rounds at most. "Sold out" is only concluded when every bucket is empty and nothing is
 * journaled, read inside the move seqlock (no move was half done meanwhile), so the process may
 * remember it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { moveInto, readMoveSeq, recoverMoves } from '@/lib/seckill/buckets/move';
import { bucketTag } from '@/lib/seckill/buckets/tags';

/** Rounds of survey → move → ask again before answering SOLD_OUT without remembering it. */
export const REBALANCE_ROUNDS = 8;

interface Survey {
  stock: Map<number, number>;
  journaled: number;
}

/** Every bucket's unsold units and how many moves are journaled: one MULTI per bucket, in parallel. */
export async function surveyBuckets(redis: RedisClient, vid: string, n: number): Promise<Survey> {
  const rows = await Promise.all(
    Array.from({ length: n }, async (_, b) => {
      const t = bucketTag(vid, b, n);
      const res = await redis.multi().get(keys.seckillStock(t)).hlen(keys.seckillMovesOut(t)).exec();
      if (!res) throw new Error('redis transaction aborted');
      for (const [err] of res) if (err) throw err;
      return [Number(res[0]![1] ?? 0), Number(res[1]![1])] as const;
    }),
  );
  return { stock: new Map(rows.map(([s], b) => [b, s])), journaled: rows.reduce((a, [, j]) => a + j, 0) };
}

const empty = (s: Survey) => s.journaled === 0 && [...s.stock.values()].every((x) => x <= 0);


/**
 * `askHome` runs the grab script in the user's home bucket again. Returns its last answer, and
 * whether SOLD_OUT is the whole sale's (the refusal memory may learn it only then).
 */
export async function grabWithRebalance<R extends [number, ...unknown[]]>(
  redis: RedisClient,
  vid: string,
  n: number,
  home: number,
  soldOutCode: number,
  askHome: () => Promise<R>,
): Promise<{ reply: R | null; soldOut: boolean }> {
  for (let round = 0; round < REBALANCE_ROUNDS; round++) {
    // The move seqlock around the survey: even and unchanged means no move was half done while
    // the buckets were read, so "every bucket empty, nothing journaled" is the whole sale's truth.
    const before = await readMoveSeq(redis, vid);
    const s = await surveyBuckets(redis, vid, n);
    if (empty(s)) {
      const after = await readMoveSeq(redis, vid);
      if (before % 2 === 0 && after === before) return { reply: null, soldOut: true };
      const again = await askHome(); // a move was under way: it may have brought a unit home
      if (again[0] !== soldOutCode) return { reply: again, soldOut: false };
      continue;
    }
    if ((s.stock.get(home) ?? 0) <= 0) {
      const donors = [...s.stock].some(([b, x]) => b !== home && x > 0);
      // Only journaled units left: a mover died mid-move (or is between its steps); finish it.
      const moved = donors ? await moveInto(redis, vid, n, home, s.stock) : await recoverMoves(redis, vid, n);
      if (moved === null) await sleep(1 + Math.random() * 3); // the lock stayed busy: ask again shortly
    }
    const reply = await askHome();
    if (reply[0] !== soldOutCode) return { reply, soldOut: false };
  }
  return { reply: null, soldOut: false };
}
