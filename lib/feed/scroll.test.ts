/**
 * Scroll paging by (max score, offset): notes with identical timestamps are each returned exactly
 * once, notes pushed while a reader scrolls do not shift the pages, and the inbox cap keeps the newest.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { fanOut } from '@/lib/feed/fanout';
import { scrollInbox, type FeedCursor } from '@/lib/feed/feed.service';
import { runScript } from '@/lib/redis/scripts';
import { makeUsers } from '@/e2e/support/fixtures/blog';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const push = (userId: string, blogId: string, at: number, cap = 1000) => runScript(redis, 'feed-push', [keys.feed(userId)], [blogId, at, cap, 3600]);

async function readAll(userId: string, pageSize: number, between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: FeedCursor | null = null;
  for (let page = 0; page < 100; page++) {
    const r = await scrollInbox(redis, userId, cursor, pageSize);
    seen.push(...r.ids);
    if (!r.next) return seen;
    cursor = r.next;
    await between?.(page);
  }
  throw new Error('scroll did not end');
}

describe('feed scroll paging', () => {
  it('returns every note exactly once when many share a timestamp, for every page size', async () => {
    const user = `7${Date.now()}`;
    const t = 1_700_000_000_000;
    // 7 notes at t+3, 12 at t+2 (more than a page), 1 at t+1, 9 at t.
    const plan: [number, number][] = [[t + 3, 7], [t + 2, 12], [t + 1, 1], [t, 9]];
    let id = 1000;
    const all: string[] = [];
    for (const [at, n] of plan) for (let i = 0; i < n; i++) {
      all.push(String(++id));
      await push(user, String(id), at);
    }
    for (const size of [1, 2, 3, 5, 7, 10, 12, 13, 29, 30]) {
      const seen = await readAll(user, size);
      expect(seen.length, `page size ${size}`).toBe(all.length);
      expect(new Set(seen), `page size ${size}`).toEqual(new Set(all));
    }
    await redis.del(keys.feed(user));
  });

  it('notes pushed while scrolling do not shift later pages', async () => {
    const user = `8${Date.now()}`;
    const t = 1_700_000_000_000;
    const old = Array.from({ length: 20 }, (_, i) => String(2000 + i));
    for (const [i, b] of old.entries()) await push(user, b, t + Math.floor(i / 4)); // groups of 4 equal timestamps
    const seen = await readAll(user, 6, async (page) => {
      await push(user, String(9000 + page), t + 1000 + page); // newer than everything
    });
    expect(seen.sort()).toEqual([...old].sort());
    await redis.del(keys.feed(user));
  });

  it('caps an inbox at the newest N notes', async () => {
    const [author] = await makeUsers(db, 1, 'capauthor');
    const follower = `6${Date.now()}`;
    await db.insertInto('tb_follow').values({ user_id: follower, follow_user_id: author! }).execute();
    for (let i = 1; i <= 8; i++) {
      await fanOut(db, redis, { blogId: String(3000 + i), authorId: author!, at: 1_700_000_000_000 + i }, { cap: 5, blogExists: async () => true });
    }
    expect(await redis.zrevrange(keys.feed(follower), 0, -1)).toEqual(['3008', '3007', '3006', '3005', '3004']);
    expect(await redis.ttl(keys.feed(follower))).toBeGreaterThan(0);
    await redis.del(keys.feed(follower));
    await db.deleteFrom('tb_follow').where('user_id', '=', follower).execute();
  });
});
