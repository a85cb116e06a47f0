/**
 * Test helpers: real services only. Each test file gets unique phones/ids so files never
 * collide, and `callRoute` drives a route handler with a real Request (no HTTP server needed).
 * With TEST_DOOR=hot, calls to a hot route (app/api/hot-routes.ts) go over HTTP through the hot
 * server instead (e2e/support/hot-door.ts), so the same tests prove both doors.
 */
import { randomInt } from 'node:crypto';
import { testDoor } from '@/e2e/support/knobs';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { throughHotServer } from '@/e2e/support/hot-door';

/** A random valid phone in the 19x range (demo accounts use 138). */
export function randomPhone(): string {
  return `19${randomInt(0, 10)}${String(randomInt(0, 100_000_000)).padStart(8, '0')}`;
}

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: string;
  token?: string;
  headers?: Record<string, string>;
  params?: Record<string, string>;
  query?: Record<string, string>;
}

export async function callRoute(handler: Handler, opts: CallOptions = {}) {
  const url = new URL('http://localhost:3000/api/test');
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
  const headers = new Headers(opts.headers);
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  if (opts.token) headers.set('authorization', `Bearer ${opts.token}`);
  const req = new Request(url, { method: opts.method ?? (body ? 'POST' : 'GET'), headers, body });
  const res = (testDoor === 'hot' && (await throughHotServer(handler, req, opts.params ?? {}))) || (await handler(req, { params: Promise.resolve(opts.params ?? {}) }));
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route's JSON body: each test asserts on the shape it expects
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Logs a fresh consumer in through the real SMS path and returns its Bearer token. */
export async function loginNewUser(phone = randomPhone()): Promise<{ token: string; userId: string; phone: string }> {
  const { sendLoginCode, login } = await import('@/lib/auth/login');
  const { db } = await import('@/lib/db/client');
  await sendLoginCode(redis, phone, `10.${randomInt(0, 255)}.${randomInt(0, 255)}.${randomInt(0, 255)}`);
  const code = await redis.get(keys.devSms(phone));
  const r = await login(db, redis, { phone, code: code! }, '127.0.0.1');
  return { token: r.token, userId: r.user.id, phone };
}
