/**
 * The 点评 half's background loops, run in the worker process: the like-count flush (tb_blog.liked
 * follows the likes, lib/blog/like-flush.ts) and the upload sweep (unclaimed uploads after a day,
 * pictures of deleted notes, lib/upload/lifecycle.ts). Both are safe with several workers at once.
 * stop() clears the timers and waits for a run in progress.
 */
import { db as defaultDb, type DB } from '@/lib/db/client';
import { log } from '@/lib/log';
import { redis as defaultRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { flushLikeCounts } from '@/lib/blog/like-flush';
import { sweepUploads } from '@/lib/upload/lifecycle';

export interface SocialUpkeepOptions {
  db?: DB;
  redis?: RedisClient;
  likeFlushMs?: number;
  uploadSweepMs?: number;
}

export interface SocialUpkeep {
  stop(): Promise<void>;
}

export function startSocialUpkeep(options: SocialUpkeepOptions = {}): SocialUpkeep {
  const db = options.db ?? defaultDb;
  const redis = options.redis ?? defaultRedis;
  let stopping = false;
  const running = new Set<Promise<unknown>>();
  const timers: NodeJS.Timeout[] = [];

  function every(ms: number, name: string, work: () => Promise<number>): void {
    let busy = false;
    const tick = () => {
      if (busy || stopping) return; // a slow run is never overlapped by the next tick
      busy = true;
      const p = work()
        .then((n) => n > 0 && log.info({ n }, `${name} done`))
        .catch((err: unknown) => log.warn({ err: (err as Error).message }, `${name} failed; retried next interval`))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    timers.push(setInterval(tick, ms));
  }

  every(options.likeFlushMs ?? 2000, 'like counts flush', () => flushLikeCounts(db, redis));
  every(options.uploadSweepMs ?? 10 * 60_000, 'upload sweep', () => sweepUploads(db));

  return {
    async stop() {
      stopping = true;
      for (const t of timers) clearInterval(t);
      await Promise.all(running);
    },
  };
}
