/**
 * Note images: whatever the client sends is only a candidate. The bytes decide the type (sharp
 * reads the header, never the file name or content-type); size and pixel count are capped before
 * decoding (a small file that inflates to gigapixels is refused by `limitInputPixels`); the image is
 * re-encoded to WebP, which drops every metadata block (EXIF GPS, comments, embedded scripts).
 * Stored names are random and chosen here, so nothing the client says reaches the file system.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp, { type OutputInfo } from 'sharp';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';

export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
/** 24 megapixels: any phone photo, far below what would exhaust memory when decoded. */
export const MAX_INPUT_PIXELS = 24_000_000;
/** Longest side after re-encoding: enough for a phone screen at 3x. */
const MAX_SIDE = 1600;
const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'avif']);

/** The only shape a stored image name can have: 32 hex characters + .webp. */
export const IMAGE_NAME = /^[a-f0-9]{32}\.webp$/;

export function uploadDir(): string {
  return path.resolve(process.cwd(), env.UPLOAD_DIR);
}

/** Checks, re-encodes and stores one image; returns its stored name. */
export async function storeImage(input: Buffer): Promise<{ name: string; width: number; height: number; bytes: number }> {
  if (input.byteLength === 0) throw new AppError('BAD_REQUEST', '图片为空');
  if (input.byteLength > MAX_UPLOAD_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', '图片不能超过 5 MB');
  let format: string | undefined;
  try {
    const meta = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    format = meta.format;
    // The header's own dimensions, checked before anything is decoded (decompression bombs).
    if ((meta.width ?? 0) * (meta.height ?? 0) * (meta.pages ?? 1) > MAX_INPUT_PIXELS) throw new AppError('PAYLOAD_TOO_LARGE', '图片像素过多');
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (/pixel limit/i.test(err instanceof Error ? err.message : '')) throw new AppError('PAYLOAD_TOO_LARGE', '图片像素过多');
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', '文件不是可识别的图片');
  }
  if (!format || !ACCEPTED_FORMATS.has(format)) throw new AppError('UNSUPPORTED_MEDIA_TYPE', '只支持 JPEG / PNG / WebP / GIF / HEIC 图片');
  let out: { data: Buffer; info: OutputInfo };
  try {
    out = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate() // apply the EXIF orientation before the EXIF block is dropped
      .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    const msg = err instanceof Error ? err.message : '';
    if (/pixel limit/i.test(msg)) throw new AppError('PAYLOAD_TOO_LARGE', '图片像素过多');
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', '图片已损坏或无法解码');
  }
  const name = `${randomBytes(16).toString('hex')}.webp`;
  const file = imagePath(name);
  await mkdir(path.dirname(file), { recursive: true });
  // Write then rename: a reader never sees a half-written file.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, out.data);
  await rename(tmp, file);
  return { name, width: out.info.width, height: out.info.height, bytes: out.data.byteLength };
}

/** Images are spread over 256 sub-directories by their first two characters. */
function imagePath(name: string): string {
  return path.join(uploadDir(), name.slice(0, 2), name);
}

/** The stored bytes of an image, or null for a name that is malformed or unknown. */
export async function readImage(name: string): Promise<Buffer | null> {
  if (!IMAGE_NAME.test(name)) return null;
  try {
    return await readFile(imagePath(name));
  } catch {
    return null;
  }
}

export async function imageExists(name: string): Promise<boolean> {
  if (!IMAGE_NAME.test(name)) return false;
  return access(imagePath(name)).then(
    () => true,
    () => false,
  );
}

/** Deletes a stored image; a file already gone is not an error. */
export async function removeImage(name: string): Promise<void> {
  if (!IMAGE_NAME.test(name)) return;
  try {
    await unlink(imagePath(name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
