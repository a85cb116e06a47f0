import { route } from '@/lib/http/route';
import { readCappedBytes } from '@/lib/http/parse';
import { AppError } from '@/lib/errors';
import { consume } from '@/lib/rate-limit';
import { db } from '@/lib/db/client';
import { MAX_UPLOAD_BYTES } from '@/lib/upload/image';
import { acceptUpload, uploadQuotaError } from '@/lib/upload/lifecycle';
import { countUploadsOfUser } from '@/lib/upload/upload.repository';
import { env } from '@/lib/env';

/**
 * POST /api/uploads — the image's bytes as the body (Content-Type image/* or
 * application/octet-stream; no multipart, no file name: nothing the client names reaches the disk).
 * Answers `{ name, url, width, height }`; the name is what a note's `images` lists. An upload no
 * note claims within a day is deleted by the worker's sweep.
 */
export const POST = route({ auth: 'user' }, async ({ req, user }) => {
  const type = (req.headers.get('content-type') ?? '').toLowerCase();
  if (!type.startsWith('image/') && !type.startsWith('application/octet-stream')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', '请直接上传图片文件');
  }
  if (Number(req.headers.get('content-length') ?? '0') > MAX_UPLOAD_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', '图片不能超过 5 MB');
  await consume('uploadUser', user.id);
  // A quota of stored images per user: the hourly limit alone let one account keep ~160 MB an hour
  // for good (images on notes are never swept). This count is a cheap early refusal before the
  // image is decoded; acceptUpload decides, under the user's row lock, so parallel uploads stop
  // exactly at the cap.
  if (env.UPLOAD_MAX_PER_USER > 0 && (await countUploadsOfUser(db, user.id)) >= env.UPLOAD_MAX_PER_USER) throw uploadQuotaError();
  const stored = await acceptUpload(db, user.id, await readCappedBytes(req, MAX_UPLOAD_BYTES));
  return { ...stored, url: `/api/uploads/${stored.name}` };
});
