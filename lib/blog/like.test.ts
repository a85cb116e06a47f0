/**
 * 200 users like and unlike one note at the same time, several clicks each: afterwards the ZSET,
 * tb_blog.liked, tb_blog_like and every user's own state agree, and the likers come in like order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { firstLikers, toggleLike } from '@/lib/blog/like';
import { insertNote, cleanupSocialFixtures, makeShop, makeUsers, storedImageName } from '@/lib/blog/testing';

let users: string[] = [];
let blogId = '';

beforeAll(async () => {
  users = await makeUsers(db, 201, 'liker');
  blogId = await insertNote(db, users[200]!, await makeShop(), await storedImageName());
  users = users.slice(0, 200);
  // A fresh note: a ZSET left under this id by an earlier database of the same name is not ours.
  await redis.del(keys.blogLiked(blogId));
});

afterAll(async () => {
  await cleanupSocialFixtures();
  await closeDb();
  await closeRedis();
});

async function dbState() {
  const blog = await db.selectFrom('tb_blog').select('liked').where('id', '=', blogId).executeTakeFirstOrThrow();
  const rows = await db.selectFrom('tb_blog_like').select('user_id').where('blog_id', '=', blogId).execute();
  return { count: blog.liked, likers: new Set(rows.map((r) => r.user_id)) };
}

describe('like toggles under concurrency', () => {
  it('200 users clicking 1-3 times each at once: ZSET, DB count, rows and each state agree', async () => {
    // User i clicks (i % 3) + 1 times: odd totals end liked, even ones end not liked.
    const clicks = users.flatMap((u, i) => Array.from({ length: (i % 3) + 1 }, () => u));
    clicks.sort(() => Math.random() - 0.5);
    const results = await Promise.all(clicks.map((u) => toggleLike(db, redis, blogId, u)));
    expect(results).toHaveLength(clicks.length);

    const expected = new Set(users.filter((_, i) => ((i % 3) + 1) % 2 === 1));
    const { count, likers } = await dbState();
    const zset = new Set(await redis.zrange(keys.blogLiked(blogId), 0, -1));
    expect(likers).toEqual(expected);
    expect(zset).toEqual(expected);
    expect(count).toBe(expected.size);
    for (const u of users) expect((await redis.zscore(keys.blogLiked(blogId), u)) !== null).toBe(expected.has(u));
  });

  it('the first five likers come in the order they liked, and the ZSET is rebuilt from MySQL when lost', async () => {
    const before = await firstLikers(db, redis, { id: blogId, liked: (await dbState()).count });
    expect(before).toHaveLength(5);
    const ordered = await db.selectFrom('tb_blog_like').select('user_id').where('blog_id', '=', blogId).orderBy('create_time').orderBy('user_id').limit(5).execute();
    const scores = await redis.zrange(keys.blogLiked(blogId), 0, 4, 'WITHSCORES');
    expect(Number(scores[1])).toBeLessThanOrEqual(Number(scores[9]));
    expect(new Set(before.map((u) => u.id))).toEqual(new Set(ordered.map((r) => r.user_id)));

    await redis.del(keys.blogLiked(blogId));
    const { count, likers } = await dbState();
    const after = await firstLikers(db, redis, { id: blogId, liked: count });
    expect(after.map((u) => u.id)).toEqual(before.map((u) => u.id));
    expect(new Set(await redis.zrange(keys.blogLiked(blogId), 0, -1))).toEqual(likers);
  });

  it('a like on a note that does not exist is a 404 and creates no key', async () => {
    await expect(toggleLike(db, redis, '987654321987', users[0]!)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await redis.exists(keys.blogLiked('987654321987'))).toBe(0);
  });
});
