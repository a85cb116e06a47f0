/** SQL for tb_upload: who uploaded which stored image and which note holds it. */
import { sql } from 'kysely';
import type { Executor } from '@/lib/db/client';

export async function recordUpload(db: Executor, name: string, userId: string): Promise<void> {
  await db.insertInto('tb_upload').values({ name, user_id: userId }).execute();
}

/** Serialises one user's uploads (the quota's count and the insert), in the caller's transaction. */
export async function lockUploader(trx: Executor, userId: string): Promise<void> {
  await trx.selectFrom('tb_user').select('id').where('id', '=', userId).forUpdate().execute();
}

/** How many images this user has stored (on notes or not yet claimed). */
export async function countUploadsOfUser(db: Executor, userId: string): Promise<number> {
  const r = await db.selectFrom('tb_upload').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Gives these uploads to the note: only the uploader's own, only those no note holds yet. Returns
 * how many it took; the caller refuses the note (and rolls back) unless it took them all.
 */
export async function claimUploads(trx: Executor, names: string[], userId: string, blogId: string): Promise<number> {
  if (names.length === 0) return 0;
  const r = await trx.updateTable('tb_upload').set({ blog_id: blogId }).where('name', 'in', names).where('user_id', '=', userId).where('blog_id', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export function findUploads(db: Executor, names: string[]) {
  if (names.length === 0) return Promise.resolve([]);
  return db.selectFrom('tb_upload').select(['name', 'blog_id']).where('name', 'in', names).execute();
}

/** Forgets an upload held by this note (the note is gone); true when this call removed the row. */
export async function forgetNoteUpload(db: Executor, name: string, blogId: string): Promise<boolean> {
  const r = await db.deleteFrom('tb_upload').where('name', '=', name).where('blog_id', '=', blogId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Forgets an upload still unattached since before `olderThan`; false when a note claimed it first. */
export async function forgetStaleUpload(db: Executor, name: string, olderThan: Date): Promise<boolean> {
  const r = await db.deleteFrom('tb_upload').where('name', '=', name).where('blog_id', 'is', null).where('create_time', '<', olderThan).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export function listStaleUploads(db: Executor, olderThan: Date, limit: number) {
  return db.selectFrom('tb_upload').select('name').where('blog_id', 'is', null).where('create_time', '<', olderThan).orderBy('create_time').limit(limit).execute();
}

/** Uploads held by a note that no longer exists (a deletion that stopped before removing them). */
export function listOrphanedUploads(db: Executor, limit: number) {
  return db
    .selectFrom('tb_upload as u')
    .leftJoin('tb_blog as b', 'b.id', 'u.blog_id')
    .select(['u.name', 'u.blog_id'])
    .where('u.blog_id', 'is not', null)
    .where(sql<boolean>`b.id IS NULL`)
    .limit(limit)
    .execute();
}
