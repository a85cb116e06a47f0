import { z } from 'zod';
import { AppError } from '@/lib/errors';
import type { MaybePromise } from '@/lib/maybe-promise';

export const MAX_BODY_BYTES = 64 * 1024;

/** Reads and validates a JSON body: size-capped, content-type checked, zod-parsed. */
export async function parseJson<S extends z.ZodType>(req: Request, schema: S): Promise<z.infer<S>> {
  requireJsonMediaType(req);
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', '请求体过大');
  const text = await readCapped(req, MAX_BODY_BYTES);
  let raw: unknown;
  try {
    raw = text ? JSON.parse(text) : undefined;
  } catch {
    throw new AppError('BAD_REQUEST', '请求体不是合法的 JSON');
  }
  return schema.parse(raw);
}

/**
 * For routes whose body is optional (e.g. the grab): no body at all is fine — clients differ in
 * whether an empty POST carries content-length — but any body present must be JSON and match.
 */
export async function parseOptionalJson<S extends z.ZodType>(req: Request, schema: S): Promise<z.infer<S>> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', '请求体过大');
  const text = carriesBody(req) ? await readCapped(req, MAX_BODY_BYTES) : '';
  if (text.trim() === '') return schema.parse(undefined);
  requireJsonMediaType(req);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new AppError('BAD_REQUEST', '请求体不是合法的 JSON');
  }
  return schema.parse(raw);
}

/**
 * The body must be declared `application/json` (optionally `; charset=utf-8`), parsed as a media
 * type: the essence before `;` decides, so `text/plain;charset=application/json` — a "simple"
 * type a foreign page may post without a CORS preflight — is refused.
 */
export function isJsonMediaType(header: string | null): boolean {
  if (!header) return false;
  const [essence, ...params] = header.split(';');
  if (essence!.trim().toLowerCase() !== 'application/json') return false;
  return params.every((p) => {
    const [name, value = ''] = p.split('=');
    const n = name!.trim().toLowerCase();
    return n !== 'charset' || /^"?utf-8"?$/i.test(value.trim());
  });
}

function requireJsonMediaType(req: Request): void {
  if (!isJsonMediaType(req.headers.get('content-type'))) throw new AppError('UNSUPPORTED_MEDIA_TYPE', '请求体必须是 application/json');
}

/** The raw body text, refusing more than `limit` bytes (413): for bodies that must be verified byte for byte, like a signed notify. */
export async function readCapped(req: Request, limit: number): Promise<string> {
  return utf8.decode(await readCappedBytes(req, limit));
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * A body the server already read whole before the handler (the hot server reads a hot route's
 * body first, capped at MAX_BODY_BYTES: lib/hot/node-adapter.ts), under this key of the request:
 * null for none. Readers take it from there instead of building a web stream to read it again
 * (~0.2 ms a request in a room spike's profile, 2026-11-26).
 */
export const PREREAD_BODY = Symbol.for('hmdp.prereadBody');

function prereadOf(req: Request): Buffer | null | undefined {
  return (req as unknown as Record<symbol, Buffer | null | undefined>)[PREREAD_BODY];
}

/** Whether the request has a body to read (the pre-read one, else the web stream). */
function carriesBody(req: Request): boolean {
  const pre = prereadOf(req);
  return pre === undefined ? req.body !== null : pre !== null;
}

/** The raw body, refused with 413 as soon as it grows past `limit` (never buffered whole first). */
export async function readCappedBytes(req: Request, limit: number): Promise<Buffer> {
  const pre = prereadOf(req);
  if (pre !== undefined) {
    // The hot server stops reading just past MAX_BODY_BYTES: a body that long is cut, whatever the limit.
    if (pre !== null && pre.byteLength > Math.min(limit, MAX_BODY_BYTES)) throw new AppError('PAYLOAD_TOO_LARGE', '请求体过大');
    return pre ?? Buffer.alloc(0);
  }
  if (!req.body) return Buffer.alloc(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new AppError('PAYLOAD_TOO_LARGE', '请求体过大');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export function parseQuery<S extends z.ZodType>(req: Request, schema: S): z.infer<S> {
  const params = Object.fromEntries(new URL(req.url).searchParams.entries());
  return schema.parse(params);
}

/** A positive BIGINT id as a string: digits only, no leading zero, at most 19 digits and ≤ 2^63-1. */
export const idSchema = z
  .string()
  .regex(/^[1-9]\d{0,18}$/, 'id 必须是正整数')
  // zod runs refinements even after the regex failed: only digits may reach BigInt().
  .refine((s) => !/^\d+$/.test(s) || BigInt(s) <= 9223372036854775807n, 'id 超出范围');

/** Up to 18 digits is always ≤ 2^63-1: the common case needs no schema. */
const shortId = /^[1-9]\d{0,17}$/;

export function parseId(raw: string | undefined, what = 'id'): string {
  if (raw !== undefined && shortId.test(raw)) return raw;
  const r = idSchema.safeParse(raw);
  if (!r.success) throw new AppError('BAD_REQUEST', `${what} 不合法`);
  return r.data;
}

const emptyBody = z.object({}).strict().optional();

/**
 * For actions that take nothing but the path (grab, replay, preheat, logout…): no body, or an
 * empty JSON object. Anything else is refused before the action runs, so a garbled request never
 * does something by accident.
 */
export function expectNoBody(req: Request): MaybePromise<void> {
  const declared = req.headers.get('content-length');
  // No body at all (the usual case): nothing to read, no promise.
  if (!carriesBody(req) && (declared === null || declared === '0')) return;
  return parseOptionalJson(req, emptyBody).then(() => undefined);
}
