/**
 * Delivers one published note to its author's followers: walks tb_follow by follower id in pages
 * and pushes into each inbox with lua/feed-push-1.lua (one key per call, so it runs on a Redis
 * Cluster too; the calls of a page go out together and ioredis pipelines them on the socket).
 * Followers are read when the message is consumed, so whoever unfollowed before that gets nothing.
 * Idempotent: a redelivered message rewrites the same member with the same score.
 */
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import type { RedisClient } from '@/lib/redis/types';
import { followerPage } from '@/lib/follow/follow.repository';
import type { FeedMessage } from '@/lib/blog/feed-message';

/** An inbox nobody opened for this long is dropped (a follower who comes back starts empty). */
export const FEED_TTL_SECONDS = 30 * 24 * 3600;

export interface FanoutResult {
  followers: number;
  delivered: number;
  skipped?: 'deleted';
}

export async function fanOut(
  db: Executor,
  redis: RedisClient,
  msg: FeedMessage,
  opts: { batch?: number; cap?: number; blogExists: (id: string) => Promise<boolean> },
): Promise<FanoutResult> {
  const batch = opts.batch ?? env.FEED_FANOUT_BATCH;
  const cap = opts.cap ?? env.FEED_INBOX_MAX;
  // A note deleted before its fan-out ran is not delivered at all.
  if (!(await opts.blogExists(msg.blogId))) return { followers: 0, delivered: 0, skipped: 'deleted' };
  let after = '0';
  let followers = 0;
  let delivered = 0;
  for (;;) {
    const page = await followerPage(db, msg.authorId, after, batch);
    if (page.length === 0) break;
    const added = await Promise.all(page.map((f) => runScript<number>(redis, 'feed-push', [keys.feed(f)], [msg.blogId, msg.at, cap, FEED_TTL_SECONDS])));
    followers += page.length;
    delivered += added.reduce((a, b) => a + Number(b), 0);
    after = page[page.length - 1]!;
    if (page.length < batch) break;
  }
  return { followers, delivered };
}
