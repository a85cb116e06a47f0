/**
 * Follows. tb_follow is the truth; follows:{userId} is its cached SET, filled whole from the table
 * when missing (with a marker member so "follows nobody" is cached too) and updated in place after
 * each committed write only while it is cached (lua/follow-apply-1.lua), so a lost set is never
 * replaced by a partial one. A TTL bounds the staleness of a fill that raced a write.
 *
 * 共同关注 is not SINTER: two users' sets live in different Redis Cluster slots, so each set is
 * read on its own (SMEMBERS) and intersected here.
 */
import type { DB, Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import type { RedisClient } from '@/lib/redis/types';
import {
  countFollowers, countFollowing, deleteFollow, findPublicUser, findUsersIn, insertFollow, listFollowedIds, listFollowUsers, lockFollower, lockFollowerShared,
} from '@/lib/follow/follow.repository';

/** A user follows at most this many others (bounds the SET and the fill script's arguments). */
export const MAX_FOLLOWING = 2000;
const FOLLOWS_TTL_SECONDS = 24 * 3600;
const MARKER = '0';

export async function follow(db: DB, redis: RedisClient, userId: string, targetId: string): Promise<{ following: true }> {
  if (userId === targetId) throw new AppError('BAD_REQUEST', '不能关注自己');
  if (!(await findPublicUser(db, targetId))) throw notFound('用户');
  // The count and the insert under the follower's row lock: parallel follows cannot all pass the cap.
  await writeFollow(db, redis, userId, targetId, true, async (trx) => {
    if ((await countFollowing(trx, userId)) >= MAX_FOLLOWING) throw new AppError('CONFLICT', `最多关注 ${MAX_FOLLOWING} 人`);
    await insertFollow(trx, userId, targetId);
  });
  return { following: true };
}

export async function unfollow(db: DB, redis: RedisClient, userId: string, targetId: string): Promise<{ following: false }> {
  if (!(await findPublicUser(db, targetId))) throw notFound('用户');
  await writeFollow(db, redis, userId, targetId, false, (trx) => deleteFollow(trx, userId, targetId));
  return { following: false };
}

/**
 * One follow or unfollow: the row written and the cached SET updated while the follower's row lock
 * is held, so one user's writes reach Redis in the order they commit. Applied after the commit, a
 * follow that committed first could reach Redis after a later unfollow (or the other way round) and
 * leave the SET apart from tb_follow for its whole TTL. The SET is set to the state just written
 * even when the row did not change (an idempotent write heals a stale copy). When the commit (or
 * the Redis call) fails after the SET may have changed, the SET is dropped: it is refilled whole
 * from tb_follow on the next read.
 */
async function writeFollow(db: DB, redis: RedisClient, userId: string, targetId: string, following: boolean, write: (trx: Executor) => Promise<unknown>): Promise<void> {
  const key = keys.follows(userId);
  let applied = false;
  try {
    await db.transaction().execute(async (trx) => {
      await lockFollower(trx, userId);
      await write(trx);
      applied = true;
      await runScript(redis, 'follow-apply', [key], [targetId, following ? '1' : '0']);
    });
  } catch (err) {
    if (applied) await redis.del(key).catch((e: unknown) => log.warn({ err: (e as Error).message, userId }, 'follow: could not drop the SET after a failed write'));
    throw err;
  }
}

/**
 * The ids a user follows, from the SET (filled from the DB when missing). The fill reads and writes
 * under a shared lock of the follower's row: a follow committed between the read and the fill
 * found no SET to update, and the fill left it out for the SET's whole TTL (that author's notes
 * hidden from the feed for a day).
 */
export async function followedIds(db: DB, redis: RedisClient, userId: string): Promise<Set<string>> {
  const key = keys.follows(userId);
  let members = await redis.smembers(key);
  if (members.length === 0) {
    members = await db.transaction().execute(async (trx) => {
      await lockFollowerShared(trx, userId);
      const ids = await listFollowedIds(trx, userId);
      await runScript(redis, 'follow-fill', [key], [FOLLOWS_TTL_SECONDS, ...ids]);
      return ids;
    });
  }
  return new Set(members.filter((m) => m !== MARKER));
}

export async function isFollowing(db: DB, redis: RedisClient, userId: string, targetId: string): Promise<boolean> {
  return (await followedIds(db, redis, userId)).has(targetId);
}

export const COMMON_PAGE_SIZE = 50;

export interface CommonFollows {
  items: { id: string; nickName: string; icon: string }[];
  /** How many users both follow, all pages together. */
  total: number;
  /** Pass back as `after` for the next page; null on the last one. */
  next: string | null;
}

const byIdAsc = (a: string, b: string) => (a.length - b.length) || (a < b ? -1 : a > b ? 1 : 0);

/**
 * Users both follow, by user id, a page at a time (`after` = the last id of the previous page):
 * two single-slot reads intersected in the process (Cluster-safe). Each user follows at most
 * MAX_FOLLOWS, so the intersection is small enough to sort per request.
 */
export async function commonFollows(db: DB, redis: RedisClient, userId: string, otherId: string, after: string | null = null, limit = COMMON_PAGE_SIZE): Promise<CommonFollows> {
  const [mine, theirs] = await Promise.all([followedIds(db, redis, userId), followedIds(db, redis, otherId)]);
  const both = [...mine].filter((id) => theirs.has(id)).sort(byIdAsc);
  const rest = after === null ? both : both.filter((id) => byIdAsc(id, after) > 0);
  const page = rest.slice(0, limit);
  const users = new Map((await findUsersIn(db, page)).map((u) => [u.id, u]));
  const items = page.flatMap((id) => {
    const u = users.get(id);
    return u ? [{ id: u.id, nickName: u.nick_name, icon: u.icon }] : [];
  });
  return { items, total: both.length, next: rest.length > limit ? page[page.length - 1]! : null };
}

export interface UserProfile {
  id: string;
  nickName: string;
  icon: string;
  city: string;
  introduce: string;
  followers: number;
  following: number;
  /** Whether the viewer follows this user (null for visitors and for oneself). */
  followedByMe: boolean | null;
}

export async function userProfile(db: DB, redis: RedisClient, id: string, viewerId: string | null): Promise<UserProfile> {
  const u = await findPublicUser(db, id);
  if (!u) throw notFound('用户');
  const [followers, following, followedByMe] = await Promise.all([
    countFollowers(db, id),
    countFollowing(db, id),
    viewerId && viewerId !== id ? isFollowing(db, redis, viewerId, id) : Promise.resolve(null),
  ]);
  return { id: u.id, nickName: u.nick_name, icon: u.icon, city: u.city ?? '', introduce: u.introduce ?? '', followers, following, followedByMe };
}

export async function followList(db: Executor, id: string, direction: 'following' | 'followers') {
  if (!(await findPublicUser(db, id))) throw notFound('用户');
  const rows = await listFollowUsers(db, id, direction, 100);
  return rows.map((u) => ({ id: u.id, nickName: u.nick_name, icon: u.icon }));
}
