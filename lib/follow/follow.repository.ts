/** SQL for follows. tb_follow is the source of truth behind follows:{userId}. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

/** Serializes one user's follows (the cap's count and the insert), in the caller's transaction. */
export async function lockFollower(trx: Executor, userId: string): Promise<void> {
  await trx.selectFrom('tb_user').select('id').where('id', '=', userId).forUpdate().execute();
}

/** Waits out a follow or unfollow of this user in progress and holds the next one off, in the caller's transaction (a SET fill). */
export async function lockFollowerShared(trx: Executor, userId: string): Promise<void> {
  // MariaDB has no FOR SHARE: LOCK IN SHARE MODE is its spelling.
  await trx.selectFrom('tb_user').select('id').where('id', '=', userId).modifyEnd(sql`lock in share mode`).execute();
}

export async function insertFollow(db: Executor, userId: string, followUserId: string): Promise<boolean> {
  const r = await db.insertInto('tb_follow').ignore().values({ user_id: userId, follow_user_id: followUserId }).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deleteFollow(db: Executor, userId: string, followUserId: string): Promise<boolean> {
  const r = await db.deleteFrom('tb_follow').where('user_id', '=', userId).where('follow_user_id', '=', followUserId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function listFollowedIds(db: Executor, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('tb_follow').select('follow_user_id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.follow_user_id);
}

export async function countFollowing(db: Executor, userId: string): Promise<number> {
  const r = await db.selectFrom('tb_follow').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function countFollowers(db: Executor, userId: string): Promise<number> {
  const r = await db.selectFrom('tb_follow').select((eb) => eb.fn.countAll<string>().as('n')).where('follow_user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** One page of a user's followers by ascending id (keyset: the fan-out walks 50,000 of them). */
export async function followerPage(db: Executor, userId: string, afterId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('tb_follow')
    .select('user_id')
    .where('follow_user_id', '=', userId)
    .where('user_id', '>', afterId)
    .orderBy('user_id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.user_id);
}

export function listFollowUsers(db: Executor, userId: string, direction: 'following' | 'followers', limit: number) {
  const [mine, theirs] = direction === 'following' ? (['f.user_id', 'f.follow_user_id'] as const) : (['f.follow_user_id', 'f.user_id'] as const);
  return db
    .selectFrom('tb_follow as f')
    .innerJoin('tb_user as u', 'u.id', theirs)
    .select(['u.id', 'u.nick_name', 'u.icon'])
    .where(mine, '=', userId)
    .orderBy('f.id', 'desc')
    .limit(limit)
    .execute();
}

export function findPublicUser(db: Executor, id: string) {
  return db
    .selectFrom('tb_user as u')
    .leftJoin('tb_user_info as i', 'i.user_id', 'u.id')
    .select(['u.id', 'u.nick_name', 'u.icon', 'i.city', 'i.introduce'])
    .where('u.id', '=', id)
    .executeTakeFirst();
}

export function findUsersIn(db: Executor, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('tb_user').select(['id', 'nick_name', 'icon']).where('id', 'in', ids).execute();
}
