/** SQL for notes, their likes and comments. The only file of lib/blog that builds queries. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

/** A note joined with its author and shop: everything a card or the note page shows. */
function blogWithJoins(db: Executor) {
  return db
    .selectFrom('tb_blog as b')
    .innerJoin('tb_user as u', 'u.id', 'b.user_id')
    .leftJoin('tb_shop as s', 's.id', 'b.shop_id')
    .select([
      'b.id', 'b.shop_id', 'b.user_id', 'b.title', 'b.images', 'b.content', 'b.liked', 'b.comments', 'b.create_time',
      'u.nick_name', 'u.icon', 's.name as shop_name', 's.images as shop_images', 's.area as shop_area', 's.avg_price as shop_avg_price', 's.score as shop_score',
    ]);
}
export type BlogRow = Awaited<ReturnType<ReturnType<typeof blogWithJoins>['executeTakeFirstOrThrow']>>;

export function findBlog(db: Executor, id: string): Promise<BlogRow | undefined> {
  return blogWithJoins(db).where('b.id', '=', id).executeTakeFirst();
}

export function findBlogsByIds(db: Executor, ids: string[]): Promise<BlogRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return blogWithJoins(db).where('b.id', 'in', ids).execute();
}

/** Hot notes: most liked first, newest among equals; keyset-free offset paging (pages are short). */
export function listHotBlogs(db: Executor, offset: number, limit: number): Promise<BlogRow[]> {
  return blogWithJoins(db).orderBy('b.liked', 'desc').orderBy('b.id', 'desc').limit(limit).offset(offset).execute();
}

export function listBlogsOfShop(db: Executor, shopId: string, offset: number, limit: number): Promise<BlogRow[]> {
  return blogWithJoins(db).where('b.shop_id', '=', shopId).orderBy('b.id', 'desc').limit(limit).offset(offset).execute();
}

export function listBlogsOfUser(db: Executor, userId: string, offset: number, limit: number): Promise<BlogRow[]> {
  return blogWithJoins(db).where('b.user_id', '=', userId).orderBy('b.id', 'desc').limit(limit).offset(offset).execute();
}

export async function insertBlog(
  db: Executor,
  row: { shop_id: string; user_id: string; title: string; content: string; images: string },
): Promise<{ id: string; createTime: Date }> {
  const r = await db.insertInto('tb_blog').values(row).executeTakeFirstOrThrow();
  const id = String(r.insertId);
  const back = await db.selectFrom('tb_blog').select('create_time').where('id', '=', id).executeTakeFirstOrThrow();
  return { id, createTime: back.create_time };
}

export function lockBlog(trx: Executor, id: string) {
  return trx.selectFrom('tb_blog').select(['id', 'user_id', 'images']).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateBlogText(trx: Executor, id: string, patch: { title?: string; content?: string }): Promise<void> {
  await trx.updateTable('tb_blog').set(patch).where('id', '=', id).execute();
}

export async function deleteBlogRows(trx: Executor, id: string): Promise<void> {
  await trx.deleteFrom('tb_blog_like').where('blog_id', '=', id).execute();
  await trx.deleteFrom('tb_blog_comments').where('blog_id', '=', id).execute();
  await trx.deleteFrom('tb_blog').where('id', '=', id).execute();
}

/** The user's like of the note, liked at `at` (an existing row takes that time: the ZSET's score is what it follows). */
export async function upsertLike(db: Executor, blogId: string, userId: string, at: Date): Promise<void> {
  await db.insertInto('tb_blog_like').values({ blog_id: blogId, user_id: userId, create_time: at }).onDuplicateKeyUpdate({ create_time: at }).executeTakeFirst();
}

export async function deleteLike(db: Executor, blogId: string, userId: string): Promise<boolean> {
  const r = await db.deleteFrom('tb_blog_like').where('blog_id', '=', blogId).where('user_id', '=', userId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function likeExists(db: Executor, blogId: string, userId: string): Promise<boolean> {
  return !!(await db.selectFrom('tb_blog_like').select('user_id').where('blog_id', '=', blogId).where('user_id', '=', userId).executeTakeFirst());
}

/** Every like of a note, oldest first: what blog:liked:{id} is rebuilt from. */
export function listLikes(db: Executor, blogId: string) {
  return db.selectFrom('tb_blog_like').select(['user_id', 'create_time']).where('blog_id', '=', blogId).orderBy('create_time').orderBy('user_id').execute();
}

export function findUsersByIds(db: Executor, ids: string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('tb_user').select(['id', 'nick_name', 'icon']).where('id', 'in', ids).execute();
}

export async function insertComment(trx: Executor, blogId: string, userId: string, content: string): Promise<string> {
  const r = await trx.insertInto('tb_blog_comments').values({ blog_id: blogId, user_id: userId, content }).executeTakeFirstOrThrow();
  await trx.updateTable('tb_blog').set({ comments: sql`comments + 1` }).where('id', '=', blogId).execute();
  return String(r.insertId);
}

export function listComments(db: Executor, blogId: string, limit: number) {
  return db
    .selectFrom('tb_blog_comments as c')
    .innerJoin('tb_user as u', 'u.id', 'c.user_id')
    .select(['c.id', 'c.user_id', 'c.content', 'c.create_time', 'u.nick_name', 'u.icon'])
    .where('c.blog_id', '=', blogId)
    .orderBy('c.id')
    .limit(limit)
    .execute();
}

export async function shopExists(db: Executor, shopId: string): Promise<boolean> {
  return !!(await db.selectFrom('tb_shop').select('id').where('id', '=', shopId).executeTakeFirst());
}

export async function blogExists(db: Executor, id: string): Promise<boolean> {
  return !!(await db.selectFrom('tb_blog').select('id').where('id', '=', id).executeTakeFirst());
}

/** Shops to pick from when writing a note. */
export function listShopNames(db: Executor, limit: number) {
  return db.selectFrom('tb_shop').select(['id', 'name']).orderBy('id').limit(limit).execute();
}

export async function markFannedOut(db: Executor, id: string): Promise<void> {
  await db.updateTable('tb_blog').set({ fanout_at: new Date() }).where('id', '=', id).execute();
}

/** Notes whose fan-out never finished (publish refused, or dead-lettered), oldest first. */
export function listNotFannedOut(db: Executor, olderThan: Date, limit: number) {
  return db.selectFrom('tb_blog').select(['id', 'user_id', 'create_time']).where('fanout_at', 'is', null).where('create_time', '<', olderThan).orderBy('create_time').limit(limit).execute();
}

/**
 * Sets the note's like count to its number of tb_blog_like rows (the worker's flush): a recount,
 * not an increment, so flushes may run late, twice or out of order and still land on the truth.
 */
export async function recountLikes(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('tb_blog')
    .set({ liked: sql<number>`(SELECT COUNT(*) FROM tb_blog_like WHERE blog_id = ${id})` })
    .where('id', '=', id)
    .execute();
}
