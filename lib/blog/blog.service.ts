/**
 * Notes (探店笔记): write, edit and delete (author only), read one, list hot / by shop / by user,
 * comment. Publishing hands the fan-out to RabbitMQ (lib/feed) after the row is committed.
 */
import type { DB, Executor } from '@/lib/db/client';
import { AppError, notFound } from '@/lib/errors';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import type { SessionUser } from '@/lib/auth/session';
import { claimUploads } from '@/lib/upload/upload.repository';
import { removeNotePictures } from '@/lib/upload/lifecycle';
import { publishFeed } from '@/lib/blog/feed-publish';
import {
  deleteBlogRows, findBlog, insertBlog, insertComment, listBlogsOfShop, listBlogsOfUser, listComments, listHotBlogs, lockBlog, shopExists, updateBlogText, type BlogRow,
} from '@/lib/blog/blog.repository';
import { firstLikers, likeCountNow, likedByUser } from '@/lib/blog/like';
import { toBlogView, type BlogView } from '@/lib/blog/blog.view';
import type { BlogCreate, BlogUpdate } from '@/lib/blog/blog.schema';

export const BLOG_PAGE_SIZE = 10;

export async function createBlog(db: DB, author: SessionUser, input: BlogCreate): Promise<{ id: string; fanout: 'queued' | 'failed' }> {
  if (!(await shopExists(db, input.shopId))) throw notFound('店铺');
  const images = [...new Set(input.images)];
  // The note takes its images: each must be the author's own upload that no note holds yet (an
  // upload is deleted with the one note that holds it, and unclaimed ones are swept after a day).
  const { id, createTime } = await db.transaction().execute(async (trx) => {
    const row = await insertBlog(trx, { shop_id: input.shopId, user_id: author.id, title: input.title, content: input.content, images: images.join(',') });
    if ((await claimUploads(trx, images, author.id, row.id)) !== images.length) throw new AppError('BAD_REQUEST', '有图片不存在，请重新上传');
    return row;
  });
  try {
    await publishFeed({ blogId: id, authorId: author.id, at: createTime.getTime() });
    return { id, fanout: 'queued' };
  } catch (err) {
    // The note is saved and visible on the shop and user pages; only the followers' inboxes miss it.
    log.error({ err: (err as Error).message, blogId: id }, 'feed publish failed; the note was saved without fan-out');
    return { id, fanout: 'failed' };
  }
}

async function lockOwned(trx: Executor, actor: SessionUser, id: string) {
  const row = await lockBlog(trx, id);
  if (!row) throw notFound('笔记');
  if (row.user_id !== actor.id && actor.role !== 'admin') throw new AppError('FORBIDDEN', '只能修改自己的笔记');
  return row;
}

export async function updateBlog(db: DB, actor: SessionUser, id: string, patch: BlogUpdate): Promise<BlogView> {
  await db.transaction().execute(async (trx) => {
    await lockOwned(trx, actor, id);
    await updateBlogText(trx, id, patch);
  });
  const row = await findBlog(db, id);
  if (!row) throw notFound('笔记');
  return toBlogView(row);
}

/**
 * Deletes the note, its likes and comments, then its pictures (their URLs answer 404 from then on);
 * feeds skip it from then on (they load notes by id).
 */
export async function deleteBlog(db: DB, redis: RedisClient, actor: SessionUser, id: string): Promise<{ deleted: true }> {
  const images = await db.transaction().execute(async (trx) => {
    const row = await lockOwned(trx, actor, id);
    await deleteBlogRows(trx, id);
    return row.images.split(',').filter(Boolean);
  });
  await redis.del(keys.blogLiked(id));
  await removeNotePictures(db, id, images);
  return { deleted: true };
}

export interface BlogDetail extends BlogView {
  likers: { id: string; nickName: string; icon: string }[];
  commentList: { id: string; content: string; createTime: string; user: { id: string; nickName: string; icon: string } }[];
}

export async function getBlogDetail(db: Executor, redis: RedisClient, id: string, viewerId: string | null): Promise<BlogDetail> {
  const row = await findBlog(db, id);
  if (!row) throw notFound('笔记');
  const [liked, likers, comments] = await Promise.all([likedByUser(db, redis, [row], viewerId), firstLikers(db, redis, row), listComments(db, id, 100)]);
  // The note page shows the count the like button just answered, not the row's (a flush behind).
  const count = await likeCountNow(redis, id);
  return {
    ...toBlogView(count === null ? row : { ...row, liked: count }, liked.has(id)),
    likers,
    commentList: comments.map((c) => ({ id: c.id, content: c.content, createTime: c.create_time.toISOString(), user: { id: c.user_id, nickName: c.nick_name, icon: c.icon } })),
  };
}

async function withLikes(db: Executor, redis: RedisClient, rows: BlogRow[], viewerId: string | null): Promise<BlogView[]> {
  const liked = await likedByUser(db, redis, rows, viewerId);
  return rows.map((r) => toBlogView(r, liked.has(r.id)));
}

const offsetOf = (page: number) => (page - 1) * BLOG_PAGE_SIZE;

export async function hotBlogs(db: Executor, redis: RedisClient, page: number, viewerId: string | null) {
  return withLikes(db, redis, await listHotBlogs(db, offsetOf(page), BLOG_PAGE_SIZE), viewerId);
}

export async function shopBlogs(db: Executor, redis: RedisClient, shopId: string, page: number, viewerId: string | null) {
  return withLikes(db, redis, await listBlogsOfShop(db, shopId, offsetOf(page), BLOG_PAGE_SIZE), viewerId);
}

export async function userBlogs(db: Executor, redis: RedisClient, userId: string, page: number, viewerId: string | null) {
  return withLikes(db, redis, await listBlogsOfUser(db, userId, offsetOf(page), BLOG_PAGE_SIZE), viewerId);
}

export async function addComment(db: DB, user: SessionUser, blogId: string, content: string): Promise<{ id: string }> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockBlog(trx, blogId))) throw notFound('笔记');
    return { id: await insertComment(trx, blogId, user.id, content) };
  });
}
