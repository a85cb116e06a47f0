/**
 * An uploaded image lives as long as the note that holds it. The upload route records the uploader
 * (tb_upload); publishing claims the note's images; deleting the note deletes its pictures, so
 * their URLs answer 404; the worker sweeps uploads that no note claimed within a day and those
 * whose note is gone. The row is deleted before the file, and both the claim and the sweep only
 * take a row in the state they expect, so a note published while the sweep runs either gets its
 * picture or is refused: it never points at a removed file.
 */
import type { DB } from '@/lib/db/client';
import { retryDeadlock } from '@/lib/db/retry-deadlock';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';
import { removeImage, storeImage } from '@/lib/upload/image';
import {
  countUploadsOfUser,
  findUploads,
  forgetNoteUpload,
  forgetStaleUpload,
  listOrphanedUploads,
  listStaleUploads,
  lockUploader,
  recordUpload,
} from '@/lib/upload/upload.repository';

/** An upload no note claimed within this long is deleted. */
export const UNATTACHED_TTL_MS = 24 * 3600 * 1000;
const SWEEP_BATCH = 500;

/** The refusal of an upload past UPLOAD_MAX_PER_USER (409). */
export const uploadQuotaError = () => new AppError('UPLOAD_QUOTA', `最多保存 ${env.UPLOAD_MAX_PER_USER} 张图片，请先删除一些笔记`);

/**
 * Stores the image and records who uploaded it, within the user's quota of stored images
 * (UPLOAD_MAX_PER_USER, 0 = none). The count and the insert run in one transaction under the
 * uploader's tb_user row lock: uploads by one user in flight at once each see the others' rows, so
 * the cap is exact, and another user's uploads never wait for that lock. The file goes again when
 * the record fails or the quota refuses it.
 */
export async function acceptUpload(db: DB, userId: string, bytes: Buffer) {
  const stored = await storeImage(bytes);
  const max = env.UPLOAD_MAX_PER_USER;
  try {
    await retryDeadlock(() =>
      db.transaction().execute(async (trx) => {
        if (max > 0) {
          await lockUploader(trx, userId);
          if ((await countUploadsOfUser(trx, userId)) >= max) throw uploadQuotaError();
        }
        await recordUpload(trx, stored.name, userId);
      }),
    );
  } catch (err) {
    await removeImage(stored.name).catch(() => {});
    throw err;
  }
  return stored;
}

/**
 * After the note's rows are deleted: removes its pictures. Images this note held, and images with
 * no record at all (stored before uploads were recorded), go; one another note holds stays.
 */
export async function removeNotePictures(db: DB, blogId: string, names: string[]): Promise<void> {
  const rows = new Map((await findUploads(db, names)).map((r) => [r.name, r.blog_id]));
  for (const name of names) {
    const holder = rows.get(name);
    if (holder !== undefined && holder !== blogId) continue;
    try {
      await removeImage(name);
      if (holder !== undefined) await forgetNoteUpload(db, name, blogId);
    } catch (err) {
      // The record stays, pointing at a deleted note: the sweep retries it.
      log.warn({ err: (err as Error).message, blogId, name }, 'note picture not removed; the upload sweep retries');
    }
  }
}

/** Deletes uploads never claimed within UNATTACHED_TTL_MS, and those of deleted notes; returns how many. */
export async function sweepUploads(db: DB, now = Date.now()): Promise<number> {
  const olderThan = new Date(now - UNATTACHED_TTL_MS);
  let removed = 0;
  for (const { name } of await listStaleUploads(db, olderThan, SWEEP_BATCH)) {
    if (!(await forgetStaleUpload(db, name, olderThan))) continue; // a note claimed it meanwhile
    await removeImage(name);
    removed++;
  }
  for (const { name, blog_id } of await listOrphanedUploads(db, SWEEP_BATCH)) {
    await removeImage(name);
    if (blog_id && (await forgetNoteUpload(db, name, blog_id))) removed++;
  }
  return removed;
}
