/**
 * Likes. tb_blog_like holds one row per (note, user) and is what everything is rebuilt from;
 * blog:liked:{id} (a ZSET, user → like time) decides each toggle and answers "did I like it" and
 * "the first five likers, in order"; tb_blog.liked is a count that follows.
 *
 * A toggle never locks the note's row: on a hot note every click would queue behind the one
 * before it (and behind anyone else holding that row). Instead one Lua call flips the user's
 * member in the ZSET atomically (two clicks of one user always alternate, however close), then the
 * user's own tb_blog_like row is written to match, and re-checked against the ZSET so a second
 * click of the same user that overtook this one cannot leave the row behind. The note id goes into
 * a dirty set; the worker recounts tb_blog.liked from the rows (lib/blog/like-flush.ts), so the
 * count in MySQL lags by the flush interval while the toggle answers the ZSET's count at once.
 */
import type { DB, Executor } from '@/lib/db/client';
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import { notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import type { RedisClient } from '@/lib/redis/types';
import { blogExists, deleteLike, findUsersByIds, likeExists, listLikes, upsertLike } from '@/lib/blog/blog.repository';

export interface LikeResult {
  isLiked: boolean;
  liked: number;
}

/** Marker member of a filled ZSET (score +inf): never a user id, never shown. */
const MARKER = '';
/** Re-checks of the row against the ZSET before giving up on a user clicking faster than MySQL writes. */
const SETTLE_ROUNDS = 4;

async function likesAsArgs(db: Executor, blogId: string): Promise<(string | number)[]> {
  const rows = await listLikes(db, blogId);
  return rows.flatMap((r) => [r.create_time.getTime(), r.user_id]);
}

export async function toggleLike(db: DB, redis: RedisClient, blogId: string, userId: string): Promise<LikeResult> {
  if (!(await blogExists(db, blogId))) throw notFound('笔记');
  const key = keys.blogLiked(blogId);
  const now = Date.now();
  let r = await runScript<[number, number]>(redis, 'blog-like-toggle', [key], [userId, now, '0']);
  if (r[0] === -1) r = await runScript<[number, number]>(redis, 'blog-like-toggle', [key], [userId, now, '1', ...(await likesAsArgs(db, blogId))]);
  const isLiked = r[0] === 1;
  try {
    await settleRow(db, redis, blogId, userId, isLiked, now);
  } catch (err) {
    // The row could not follow: put the ZSET back to what MySQL says, so the click did nothing.
    await likeExists(db, blogId, userId)
      .then((inDb) => (inDb === isLiked ? undefined : runScript(redis, 'blog-like-set', [key], [userId, inDb ? '1' : '0', now])))
      .catch((e: unknown) => log.warn({ err: (e as Error).message, blogId, userId }, 'like: could not undo the ZSET after a failed row write'));
    throw err;
  }
  await redis.sadd(keys.blogLikeDirty(), blogId);
  return { isLiked, liked: r[1] };
}

/**
 * Makes the user's tb_blog_like row say what the ZSET says: there or not, and liked at the score's
 * time (the order of likers must survive a ZSET rebuilt from MySQL). Writes are idempotent (upsert /
 * DELETE); after each one the ZSET is read again, so whichever of a user's concurrent clicks writes
 * last also writes the ZSET's final state. Without the time check a like, unlike, like burst could
 * leave the first click's time in the row while the ZSET holds the third's. A note deleted
 * meanwhile loses the row again (404).
 */
async function settleRow(db: DB, redis: RedisClient, blogId: string, userId: string, liked: boolean, at: number): Promise<void> {
  let want = liked;
  let when = at;
  for (let round = 0; ; round++) {
    const liking = want;
    const time = new Date(when);
    // One user's concurrent clicks write the same row: InnoDB may pick one of an upsert and a DELETE
    // of that key as a deadlock victim. Both are idempotent and the ZSET is read after them.
    await retryDeadlock(async () => {
      if (liking) await upsertLike(db, blogId, userId, time);
      else await deleteLike(db, blogId, userId);
    });
    const score = await redis.zscore(keys.blogLiked(blogId), userId);
    const now = score !== null;
    if (now === want && (score === null || Number(score) === when)) break;
    want = now;
    if (score !== null) when = Number(score);
    if (round + 1 >= SETTLE_ROUNDS) {
      // Still clicking faster than MySQL writes: that user's later click writes the row again.
      log.warn({ blogId, userId }, 'like: the row did not catch up with the ZSET within the settle rounds');
      break;
    }
  }
  if (want && !(await blogExists(db, blogId))) {
    await retryDeadlock(() => deleteLike(db, blogId, userId));
    await redis.del(keys.blogLiked(blogId));
    throw notFound('笔记');
  }
}

/**
 * Refills the ZSET from tb_blog_like when Redis lost it. Readers only refill for a note whose
 * count says it has likes (a note nobody liked has no key until its first toggle fills it).
 * The reader loaded the note before: if it was deleted since (its ZSET deleted after the commit),
 * the fill would outlive it, and the ZSET has no TTL. So the note is looked up after the fill, and
 * the fill undone when it is gone (as a toggle's settleRow does).
 */
async function ensureLikesCached(db: Executor, redis: RedisClient, blogId: string, count: number): Promise<void> {
  const key = keys.blogLiked(blogId);
  if (count === 0 || (await redis.exists(key)) === 1) return;
  const filled = await runScript<number>(redis, 'blog-like-fill', [key], await likesAsArgs(db, blogId));
  if (filled === 1 && !(await blogExists(db, blogId))) await redis.del(key);
}

/**
 * Which of these notes the user liked (one ZSCORE per note: each key is its own slot). Asked even
 * when the row's count is 0: the count follows the ZSET a moment later.
 */
export async function likedByUser(db: Executor, redis: RedisClient, blogs: { id: string; liked: number }[], userId: string | null): Promise<Set<string>> {
  const out = new Set<string>();
  if (!userId) return out;
  await Promise.all(
    blogs.map(async (b) => {
      await ensureLikesCached(db, redis, b.id, b.liked);
      if ((await redis.zscore(keys.blogLiked(b.id), userId)) !== null) out.add(b.id);
    }),
  );
  return out;
}

/** The first `n` users who liked the note, in the order they liked it (ZRANGE by score; the marker sorts last). */
export async function firstLikers(db: Executor, redis: RedisClient, blog: { id: string; liked: number }, n = 5) {
  await ensureLikesCached(db, redis, blog.id, blog.liked);
  const ids = (await redis.zrange(keys.blogLiked(blog.id), 0, n - 1)).filter((id) => id !== MARKER);
  const users = await findUsersByIds(db, ids);
  const byId = new Map(users.map((u) => [u.id, u]));
  return ids.flatMap((id) => {
    const u = byId.get(id);
    return u ? [{ id: u.id, nickName: u.nick_name, icon: u.icon }] : [];
  });
}

/**
 * The note's like count as the ZSET has it (what toggles answer), or null when Redis has no ZSET
 * for it: tb_blog.liked follows the ZSET by the worker's flush interval.
 */
export async function likeCountNow(redis: RedisClient, blogId: string): Promise<number | null> {
  const key = keys.blogLiked(blogId);
  const [exists, count] = await Promise.all([redis.exists(key), redis.zcount(key, '-inf', '(+inf')]);
  return exists === 1 ? count : null;
}

/** Users who like the note according to the ZSET (tests and checks; the marker left out). */
export async function likersInRedis(redis: RedisClient, blogId: string): Promise<Set<string>> {
  return new Set((await redis.zrange(keys.blogLiked(blogId), 0, -1)).filter((id) => id !== MARKER));
}
