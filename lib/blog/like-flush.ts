/**
 * The like count in MySQL follows the likes: each toggle adds its note's id to a Redis set, and
 * the worker pops ids from it and recounts tb_blog.liked from tb_blog_like. Several workers may
 * flush at once (SPOP hands each id to one of them); an id whose recount failed goes back.
 */
import type { Executor } from '@/lib/db/client';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import { recountLikes } from '@/lib/blog/blog.repository';

const BATCH = 200;

/** Recounts the notes liked or unliked since the last flush; returns how many. */
export async function flushLikeCounts(db: Executor, redis: RedisClient, max = 5000): Promise<number> {
  let done = 0;
  while (done < max) {
    const ids = await redis.spop(keys.blogLikeDirty(), BATCH);
    if (ids.length === 0) break;
    for (const [i, id] of ids.entries()) {
      try {
        await recountLikes(db, id);
      } catch (err) {
        await redis.sadd(keys.blogLikeDirty(), ...ids.slice(i));
        throw err;
      }
    }
    done += ids.length;
    if (ids.length < BATCH) break;
  }
  return done;
}
