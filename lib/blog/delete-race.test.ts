/**
 * A note deleted while people are reading it: readers that loaded the note before the deletion
 * and refilled its likes ZSET after it must not leave blog:liked:{id} behind. That ZSET has no
 * TTL, so each such key stayed for good under an id that no longer exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, createDb, db, type DB } from '@/lib/db/client';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import type { SessionUser } from '@/lib/auth/session';
import { deleteBlog, getBlogDetail, hotBlogs } from '@/lib/blog/blog.service';
import { cleanupSocialFixtures, insertNote, makeShop, makeUsers, storedImageName } from '@/e2e/support/fixtures/blog';

let author: SessionUser;
let reader = '';
let shopId = '';
/** Four web processes: each its own MySQL pool and Redis connection. */
const hosts: { db: DB; redis: RedisClient }[] = Array.from({ length: 4 }, () => ({ db: createDb(undefined, 8), redis: createRedis() }));

beforeAll(async () => {
  const [a, r] = await makeUsers(db, 2, 'delrace');
  author = { id: a!, nickName: 'author', icon: '', role: 'user' };
  reader = r!;
  shopId = await makeShop();
});

afterAll(async () => {
  await cleanupSocialFixtures();
  await Promise.all(
    hosts.map(async (h) => {
      await h.db.destroy();
      h.redis.disconnect();
    }),
  );
  await closeMq();
  await closeDb();
  await closeRedis();
});

describe('a note deleted while it is read', () => {
  it('80 notes, each deleted under 16 reads at once: no likes ZSET is left under a deleted id', async () => {
    const left: string[] = [];
    for (let round = 0; round < 80; round++) {
      // A liked note whose ZSET is not cached (Redis lost it, or nobody read it since the restart).
      const id = await insertNote(db, author.id, shopId, await storedImageName());
      await db.insertInto('tb_blog_like').values({ blog_id: id, user_id: reader, create_time: new Date() }).execute();
      await db.updateTable('tb_blog').set({ liked: 1 }).where('id', '=', id).execute();
      await redis.del(keys.blogLiked(id));
      await Promise.allSettled([
        ...Array.from({ length: 16 }, (_, i) => {
          const h = hosts[i % hosts.length]!;
          return i % 2 === 0 ? getBlogDetail(h.db, h.redis, id, reader) : hotBlogs(h.db, h.redis, 1, reader);
        }),
        deleteBlog(db, redis, author, id),
      ]);
      if ((await redis.exists(keys.blogLiked(id))) === 1) left.push(id);
    }
    expect(left).toEqual([]);
  }, 60_000);
});
