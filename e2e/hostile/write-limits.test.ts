/**
 * Every write has a rate limit (proof suite). Walks every route file under app/api like the hostile
 * sweep; every mutating method (POST/PUT/PATCH/DELETE) is either on EXPECTED, and a burst from one
 * user (or one client address, for routes without a user) must end in 429 + Retry-After within
 * `max` requests, or on ALLOWED with the reason it needs none. A new route on neither list fails
 * the first test, so a write cannot be added without deciding its limit.
 *
 * Each burst runs as a fresh user from an address of its own, so one route's limit never answers
 * for another's. A request's input is whatever reaches the limit: most limits are counted at the
 * handler's entry, a few after the input is parsed (login, code, notes) or the target found (shop
 * views), and those bursts send valid input for a real target.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { testDoor } from '@/e2e/support/knobs';
import type { Role } from '@/lib/db/schema';
import { createSession } from '@/lib/auth/session';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { limitPoints, type LimitName } from '@/lib/rate-limit';
import { randomPhone } from '@/e2e/support/helpers';
import { throughHotServer } from '@/e2e/support/hot-door';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { insertNote, storedImageName } from '@/e2e/support/fixtures/blog';

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const API_DIR = path.join(process.cwd(), 'app', 'api');
const NO_SUCH_ID = '987654321987';

function findRoutes(dir = API_DIR): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return findRoutes(p);
    return f === 'route.ts' ? [p] : [];
  });
}

async function mutatingMethods(): Promise<Map<string, Handler>> {
  const out = new Map<string, Handler>();
  for (const file of findRoutes()) {
    const url = '/' + path.relative(path.join(process.cwd(), 'app'), path.dirname(file)).split(path.sep).join('/');
    const mod = (await import(file)) as Record<string, unknown>;
    for (const [k, v] of Object.entries(mod)) if (/^(POST|PUT|PATCH|DELETE)$/.test(k) && typeof v === 'function') out.set(`${k} ${url}`, v as Handler);
  }
  return out;
}

/** Writes that need no limit of their own, and why. */
const ALLOWED: Record<string, string> = {
  // Ending one's own session must always work; it deletes the caller's own session key, nothing more.
  'POST /api/user/logout': 'deletes only the caller’s own session',
  // next-auth's protocol endpoint: its credentials sign-in runs the same login() as POST
  // /api/user/login, with the same SMS and password limits (proved on that route below); sign-out
  // and the CSRF token write nothing but the caller's own cookies.
  'POST /api/auth/[...nextauth]': 'sign-in runs login() and its limits; the rest touches only the caller’s cookies',
};

interface Fixture {
  f: ConsoleFixture;
  shopId: string;
  image: string;
}

interface Actor {
  id: string;
  token: string;
}

interface Burst {
  /** Who sends the burst: a fresh user of that role, or nobody (the limit is per client address). */
  who: Role | 'none';
  /** How many requests at most before the 429 must have come: the limit's points and some slack. */
  max: number;
  /** Requests sent at once (a 1-second window needs its burst inside one second). */
  parallel?: number;
  /** Path params and body of the i-th request. */
  request?: (x: Fixture, me: Actor, i: number) => Promise<{ params?: Record<string, string>; body?: string; headers?: Record<string, string> }>;
}

const slack = (name: LimitName, extra = 5) => limitPoints(name) + extra;
const noBody = async () => ({ params: { id: NO_SUCH_ID } });
const json = (v: unknown) => JSON.stringify(v);

/**
 * The social half (notes, comments, likes, follows, uploads) counts its writes per user in its own
 * module; the bursts below are sized for limits of at most a few hundred per window.
 */
const SOCIAL_MAX = 400;

const EXPECTED: Record<string, Burst> = {
  // The console: one per-user limit over every write (consoleWriteUser), counted at the entry.
  'POST /api/admin/dead-letters/[id]/discard': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: noBody },
  'POST /api/admin/dead-letters/[id]/replay': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: noBody },
  'POST /api/admin/dead-letters/replay-all': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20 },
  'POST /api/admin/orders/[id]/refund': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: noBody },
  'POST /api/admin/redeem': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ body: json({ code: 'ABCDEFGHJKLM' }) }) },
  'PUT /api/admin/shops/[id]': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ params: { id: NO_SUCH_ID }, body: json({ name: 'x' }) }) },
  'PATCH /api/admin/users/[id]': { who: 'admin', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ params: { id: NO_SUCH_ID }, body: json({ role: 'user' }) }) },
  'POST /api/admin/vouchers/[id]/preheat': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: noBody },
  'PATCH /api/admin/vouchers/[id]': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ params: { id: NO_SUCH_ID }, body: json({ title: 'x' }) }) },
  'POST /api/admin/vouchers/[id]/stock': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ params: { id: NO_SUCH_ID }, body: json({ amount: 1 }) }) },
  'POST /api/admin/vouchers': { who: 'merchant', max: slack('consoleWriteUser'), parallel: 20, request: async () => ({ body: json({}) }) },
  // Orders (pay, cancel, refund request) and the normal-voucher buy: per user.
  'POST /api/orders/[id]/cancel': { who: 'user', max: slack('orderWriteUser'), request: noBody },
  'POST /api/orders/[id]/pay': { who: 'user', max: slack('orderWriteUser'), request: noBody },
  'POST /api/orders/[id]/refund': { who: 'user', max: slack('orderWriteUser'), request: noBody },
  'POST /api/vouchers/[id]/buy': { who: 'user', max: slack('voucherBuyUser'), request: noBody },
  // The payment provider's callbacks: per client address (no user), cut off only by a flood.
  'POST /api/payments/notify': { who: 'none', max: slack('paymentNotifyClient', 50), parallel: 100, request: async () => ({ body: json({ txnId: 'x' }) }) },
  // The grab: counted inside its script, per user per second (SECKILL_USER_PER_SECOND).
  'POST /api/seckill/[voucherId]': { who: 'user', max: env.SECKILL_USER_PER_SECOND + 10, parallel: env.SECKILL_USER_PER_SECOND + 10, request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  // Reserving a flash sale and cancelling it: per user, counted at the entry (any sale, even one that does not exist).
  'POST /api/seckill/[voucherId]/reservation': { who: 'user', max: slack('reserveUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  'DELETE /api/seckill/[voucherId]/reservation': { who: 'user', max: slack('reserveUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  'POST /api/seckill/[voucherId]/waitlist': { who: 'user', max: slack('waitlistUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  'DELETE /api/seckill/[voucherId]/waitlist': { who: 'user', max: slack('waitlistUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  'POST /api/seckill/[voucherId]/waitlist/claim': { who: 'user', max: slack('waitlistUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  // The waiting room (join) and its bot gate (grab token): per user, counted at the entry (any sale).
  'POST /api/seckill/[voucherId]/room': { who: 'user', max: slack('roomUser'), parallel: 20, request: async () => ({ params: { voucherId: NO_SUCH_ID } }) },
  'POST /api/seckill/[voucherId]/room/token': { who: 'user', max: slack('roomGateUser'), request: async () => ({ params: { voucherId: NO_SUCH_ID }, body: json({ ticket: 'x' }) }) },
  'POST /api/sign': { who: 'user', max: slack('signUser') },
  // Login: code sends per phone (60 s cooldown), password tries per phone and client.
  'POST /api/user/code': { who: 'none', max: 3, request: async (_x, me) => ({ body: json({ phone: me.id }) }) },
  'POST /api/user/login': { who: 'none', max: slack('passwordLoginPhoneClient'), request: async (_x, me) => ({ body: json({ phone: me.id, password: 'wrong-password-1' }) }) },
  // Page views of a real shop, per client address.
  'POST /api/shops/[id]/view': { who: 'none', max: slack('shopViewIp'), parallel: 20, request: async (x) => ({ params: { id: x.shopId } }) },
  // The social half: limited per user in its own module (notes, comments, likes, follows, uploads).
  'POST /api/blogs': { who: 'user', max: SOCIAL_MAX, request: async (x) => ({ body: json({ shopId: x.shopId, title: '限流', content: '好吃', images: [x.image] }) }) },
  'POST /api/blogs/[id]/comments': { who: 'user', max: SOCIAL_MAX, request: async (x, me) => ({ params: { id: await insertNote(db, me.id, x.shopId, x.image) }, body: json({ content: '好吃' }) }) },
  'POST /api/blogs/[id]/like': { who: 'user', max: SOCIAL_MAX, request: async (x, me) => ({ params: { id: await note(x, me) } }) },
  'PUT /api/blogs/[id]': { who: 'user', max: SOCIAL_MAX, request: async (x, me) => ({ params: { id: await note(x, me) }, body: json({ title: '改过' }) }) },
  'DELETE /api/blogs/[id]': { who: 'user', max: SOCIAL_MAX, request: async (x, me) => ({ params: { id: await insertNote(db, me.id, x.shopId, x.image) } }) },
  'POST /api/users/[id]/follow': { who: 'user', max: SOCIAL_MAX, request: async (x) => ({ params: { id: x.f.merchantA.id } }) },
  'DELETE /api/users/[id]/follow': { who: 'user', max: SOCIAL_MAX, request: async (x) => ({ params: { id: x.f.merchantA.id } }) },
  'POST /api/uploads': { who: 'user', max: SOCIAL_MAX, request: async () => ({ body: 'not really a picture', headers: { 'content-type': 'image/png' } }) },
};

/** One note per author for the bursts that act on the same note again and again. */
const notes = new Map<string, Promise<string>>();
const note = (x: Fixture, me: Actor) => {
  let p = notes.get(me.id);
  if (!p) notes.set(me.id, (p = insertNote(db, me.id, x.shopId, x.image)));
  return p;
};

let x: Fixture;
let routes: Map<string, Handler>;
let seq = 0;

beforeAll(async () => {
  const f = await createConsoleFixture(db, redis);
  x = { f, shopId: f.shopA, image: await storedImageName() };
  routes = await mutatingMethods();
});

afterAll(async () => {
  await closeMq();
  await closeDb();
  await closeRedis();
});

async function actor(who: Burst['who']): Promise<Actor> {
  const phone = randomPhone();
  if (who === 'none') return { id: phone, token: '' };
  await db.insertInto('tb_user').values({ phone, nick_name: `limits-${who}`, role: who, password: null }).execute();
  const id = String((await db.selectFrom('tb_user').select('id').where('phone', '=', phone).executeTakeFirstOrThrow()).id);
  return { id, token: await createSession(redis, { id, nickName: `limits-${who}`, icon: '', role: who }) };
}

async function send(key: string, handler: Handler, me: Actor, ip: string, r: Awaited<ReturnType<NonNullable<Burst['request']>>>): Promise<Response> {
  const [method, url] = key.split(' ') as [string, string];
  const params = r.params ?? {};
  const href = 'http://localhost:3000' + url.replace(/\[(\w+)\]/g, (_, p: string) => encodeURIComponent(params[p] ?? NO_SUCH_ID));
  const headers = new Headers({ host: 'localhost:3000', origin: 'http://localhost:3000', [PEER_HEADER]: ip, ...r.headers });
  if (r.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  if (me.token) headers.set('authorization', `Bearer ${me.token}`);
  const req = new Request(href, { method, headers, body: r.body });
  return (testDoor === 'hot' && (await throughHotServer(handler, req, params))) || (await handler(req, { params: Promise.resolve(params) }));
}

describe('every write is rate limited', () => {
  it('every mutating route is on the expected list or the allow-list (and neither lists a route that is gone)', async () => {
    const found = [...routes.keys()].sort();
    expect(found).toEqual([...Object.keys(EXPECTED), ...Object.keys(ALLOWED)].sort());
    for (const k of Object.keys(ALLOWED)) expect(EXPECTED[k], k).toBeUndefined();
  });

  it('the limits are on', () => {
    expect(env.RATE_LIMITS, 'this proof needs the limits on').toBe(true);
  });

  for (const [key, burst] of Object.entries(EXPECTED)) {
    it(`${key}: a burst from one ${burst.who === 'none' ? 'client' : burst.who} ends in 429 + Retry-After`, async () => {
      const handler = routes.get(key);
      expect(handler, `${key} not found under app/api`).toBeDefined();
      const me = await actor(burst.who);
      const n = ++seq;
      const ip = `198.18.${200 + ((n >> 8) & 31)}.${n & 255}`;
      const statuses: number[] = [];
      let limited: Response | undefined;
      for (let sent = 0; sent < burst.max && !limited; ) {
        const batch = Math.min(burst.parallel ?? 1, burst.max - sent);
        const answers = await Promise.all(Array.from({ length: batch }, async (_, j) => send(key, handler!, me, ip, (await burst.request?.(x, me, sent + j)) ?? {})));
        sent += batch;
        for (const a of answers) {
          statuses.push(a.status);
          if (a.status === 429 && !limited) limited = a;
          else await a.body?.cancel();
        }
      }
      const tally = Object.entries(statuses.reduce<Record<number, number>>((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {}));
      expect(limited, `${key}: no 429 in ${statuses.length} requests (statuses ${JSON.stringify(tally)})`).toBeDefined();
      expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await limited!.json()).error.code).toBe('RATE_LIMITED');
      expect(statuses.every((s) => s < 500), JSON.stringify(tally)).toBe(true);
    });
  }
});
