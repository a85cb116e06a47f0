/**
 * Likes. MySQL holds one row per (note, user) and the count; blog:liked:{id} mirrors the rows as
 * a ZSET (user → like time) for "did I like it" and "the first five likers, in order".
 *
 * A toggle is one transaction that first locks the note's row: the toggles of one note run one
 * after another, so no concurrent click is counted twice, the count moves only with a row that
 * really appeared or disappeared, and the ZSET is written (one Lua call, before the commit, still
 * under the lock) in the same order as the commits. If Redis fails the transaction rolls back.
 */
import type { DB, Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import type { RedisClient } from '@/lib/redis/types';
import { addToLikeCount, deleteLike, findUsersByIds, insertLike, likeExists, listLikes, lockBlog } from '@/lib/blog/blog.repository';

export interface LikeResult {
  isLiked: boolean;
  liked: number;
}

export async function toggleLike(db: DB, redis: RedisClient, blogId: string, userId: string): Promise<LikeResult> {
  return db.transaction().execute(async (trx) => {
    const blog = await lockBlog(trx, blogId);
    if (!blog) throw notFound('笔记');
    await ensureLikesCached(trx, redis, blogId, blog.liked);
    const now = new Date();
    const liked = await insertLike(trx, blogId, userId, now);
    if (!liked && !(await deleteLike(trx, blogId, userId))) throw new AppError('CONFLICT', '点赞状态异常，请重试');
    await addToLikeCount(trx, blogId, liked ? 1 : -1);
    await runScript(redis, 'blog-like-set', [keys.blogLiked(blogId)], [userId, liked ? '1' : '0', now.getTime()]);
    return { isLiked: liked, liked: blog.liked + (liked ? 1 : -1) };
  });
}

/**
 * The ZSET is rebuilt from tb_blog_like when Redis lost it (a note with no likes has no key,
 * which is why the DB count decides whether a missing key means "lost").
 */
async function ensureLikesCached(db: Executor, redis: RedisClient, blogId: string, count: number): Promise<void> {
  if (count === 0 || (await redis.exists(keys.blogLiked(blogId))) === 1) return;
  const rows = await listLikes(db, blogId);
  if (rows.length === 0) return;
  const args = rows.flatMap((r) => [r.create_time.getTime(), r.user_id]);
  await redis.zadd(keys.blogLiked(blogId), 'NX', ...args);
}

/** Which of these notes the user liked (one ZSCORE per note: each key is its own slot). */
export async function likedByUser(db: Executor, redis: RedisClient, blogs: { id: string; liked: number }[], userId: string | null): Promise<Set<string>> {
  const out = new Set<string>();
  if (!userId) return out;
  await Promise.all(
    blogs.map(async (b) => {
      if (b.liked === 0) return;
      await ensureLikesCached(db, redis, b.id, b.liked);
      if ((await redis.zscore(keys.blogLiked(b.id), userId)) !== null) out.add(b.id);
    }),
  );
  return out;
}

/** The first `n` users who liked the note, in the order they liked it (ZRANGE by score). */
export async function firstLikers(db: Executor, redis: RedisClient, blog: { id: string; liked: number }, n = 5) {
  await ensureLikesCached(db, redis, blog.id, blog.liked);
  const ids = await redis.zrange(keys.blogLiked(blog.id), 0, n - 1);
  const users = await findUsersByIds(db, ids);
  const byId = new Map(users.map((u) => [u.id, u]));
  return ids.flatMap((id) => {
    const u = byId.get(id);
    return u ? [{ id: u.id, nickName: u.nick_name, icon: u.icon }] : [];
  });
}

/** For tests and checks: the DB's view of one user's like. */
export const isLikedInDb = likeExists;
