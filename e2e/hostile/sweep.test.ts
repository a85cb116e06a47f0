/**
 * Hostile input sweep (proof suite): every route handler under app/api, every method it exports,
 * against malformed JSON, wrong types, a body over 1 MB, unicode and emoji, SQL metacharacters,
 * bad ids, no auth, forged and expired tokens, and a forged-role JWT. Each must answer 4xx with a
 * clear `{ error: { code, message } }` (or succeed, for a public read), never 5xx, and write
 * nothing: row counts of every table and the set of Redis keys are compared before and after.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { testDoor } from '@/e2e/support/knobs';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { createSession } from '@/lib/auth/session';
import { randomPhone } from '@/e2e/support/helpers';
import { fakeImages, pngBomb } from '@/e2e/support/fixtures/upload';
import { POST as uploadImage } from '@/app/api/uploads/route';
import { throughHotServer } from '@/e2e/support/hot-door';

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
interface RouteFile { url: string; params: string[]; methods: Record<string, Handler> }

const API_DIR = path.join(process.cwd(), 'app', 'api');
// next-auth's own handler speaks its own protocol (CSRF token, redirects); covered by the e2e login.
const SKIP = [/^\/api\/auth\//];

function findRoutes(dir = API_DIR): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return findRoutes(p);
    return f === 'route.ts' ? [p] : [];
  });
}

async function loadRoutes(): Promise<RouteFile[]> {
  const out: RouteFile[] = [];
  for (const file of findRoutes()) {
    const url = '/' + path.relative(path.join(process.cwd(), 'app'), path.dirname(file)).split(path.sep).join('/');
    if (SKIP.some((r) => r.test(url))) continue;
    const mod = (await import(file)) as Record<string, unknown>;
    const methods = Object.fromEntries(Object.entries(mod).filter(([k, v]) => /^(GET|POST|PUT|PATCH|DELETE)$/.test(k) && typeof v === 'function')) as Record<string, Handler>;
    out.push({ url, params: [...url.matchAll(/\[(\w+)\]/g)].map((m) => m[1]!), methods });
  }
  return out;
}

const TABLES = ['tb_user', 'tb_user_info', 'tb_shop_type', 'tb_shop', 'tb_voucher', 'tb_seckill_voucher', 'tb_voucher_order', 'tb_order_dead_letter', 'tb_order_failure', 'tb_audit_log', 'tb_payment', 'tb_payment_attempt', 'tb_blog', 'tb_blog_like', 'tb_blog_comments', 'tb_follow', 'tb_sign', 'tb_upload'] as const;

async function snapshot() {
  const counts: Record<string, number> = {};
  for (const t of TABLES) counts[t] = Number((await db.selectFrom(t).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  // Rate-limit counters are bookkeeping, not writes of data (their keys are bounded below like any other).
  const keys = new Set(await redis.keys('*'));
  return { counts, keys };
}

const BAD_IDS = ['-1', '0', 'abc', '9'.repeat(30), '1 OR 1=1', "1'; DROP TABLE tb_user; --", '🙂', '1.5', ' 1'];
const NO_SUCH_ID = '987654321987';
const NULL_MARKER_MAX_MS = env.CACHE_NULL_TTL_SECONDS * 1000 * (1 + env.CACHE_TTL_JITTER);
const MAX_NEW_KEYS_PER_REQUEST = 6;

/** Cookies and headers a browser would never send but a stranger can: each must be nobody, never a 500. */
const MALFORMED_HEADERS: Record<string, string>[] = [
  { cookie: `${SESSION_COOKIE}=%E0%A4%A` },
  { cookie: `${SESSION_COOKIE}=%` },
  { cookie: `${SESSION_COOKIE}=${'A'.repeat(8000)}` },
  { cookie: `${SESSION_COOKIE}=a.b.c.d.e; ${SESSION_COOKIE}=%ZZ; =; ;;;` },
  { cookie: `${SESSION_COOKIE}="unterminated` },
  { authorization: 'Bearer' },
  { authorization: 'Bearer a b c' },
  { authorization: `Bearer ${'%E0%A4%A'.repeat(10)}` },
  { authorization: 'Basic YWRtaW46YWRtaW4=' },
  { 'content-type': 'application/json; charset=%E0%A4%A', 'x-hmdp-peer': '%E0%A4%A' },
  { 'x-forwarded-for': '%E0%A4%A, ::ffff:999.1.1.1, ' + '1.'.repeat(500), 'x-hmdp-peer': 'not an address' },
  { origin: 'null', 'x-forwarded-host': '%E0%A4%A', cookie: `${SESSION_COOKIE}=%E0%A4%A` },
];

const SIMPLE_TYPES_CLAIMING_JSON = ['text/plain;charset=application/json', 'text/plain; application/json', 'application/x-www-form-urlencoded;a=application/json', 'multipart/form-data; boundary=application/json', 'application/jsonx', 'application/json;charset=utf-16'];

interface Case { mustRefuse?: boolean; name: string; params?: Record<string, string>; body?: string; headers?: Record<string, string>; auth?: 'admin' | 'none' | 'forged' | 'expired' | 'forgedRoleJwt' | 'wrongSecretJwt' }

function casesFor(r: RouteFile, method: string): Case[] {
  const ok = Object.fromEntries(r.params.map((p) => [p, NO_SUCH_ID]));
  const cases: Case[] = [
    { name: 'no auth', params: ok, auth: 'none' },
    { name: 'forged bearer token', params: ok, auth: 'forged' },
    { name: 'expired session', params: ok, auth: 'expired' },
    { name: 'JWT with a forged role, signed with another secret', params: ok, auth: 'wrongSecretJwt' },
    { name: 'JWT claiming role admin around an unknown session', params: ok, auth: 'forgedRoleJwt' },
    ...MALFORMED_HEADERS.map((headers, i) => ({ name: `malformed cookie/header #${i} ${JSON.stringify(headers).slice(0, 60)}`, params: ok, headers })),
  ];
  for (const p of r.params) for (const bad of BAD_IDS) cases.push({ name: `${p}=${JSON.stringify(bad)}`, params: { ...ok, [p]: bad }, auth: 'admin' });
  if (method !== 'GET' && method !== 'DELETE') {
    const wrongTypes = JSON.stringify({ phone: 13800000000, code: 123456, password: [], shopId: { $gt: 0 }, title: null, payValue: 'ten', actualValue: -1, type: 'seckill', stock: 1e309, beginTime: 'yesterday', endTime: 42, name: true });
    cases.push(
      { name: 'malformed JSON', params: ok, body: '{"title": "x",', auth: 'admin' },
      { name: 'wrong types', params: ok, body: wrongTypes, auth: 'admin' },
      { name: 'body over 1 MB', params: ok, body: JSON.stringify({ title: 'x'.repeat(1_100_000) }), auth: 'admin' },
      { name: 'unicode and emoji', params: ok, body: JSON.stringify({ phone: '１３８００００００００', title: '🙂'.repeat(200), name: '\u202e\u0000', code: '１２３４５６' }), auth: 'admin' },
      { name: 'SQL metacharacters', params: ok, body: JSON.stringify({ phone: "1' OR '1'='1", title: "'; DROP TABLE tb_voucher; --", shopId: '1 OR 1=1', name: '%_\\' }), auth: 'admin' },
      { name: 'not JSON at all', params: ok, body: '<xml/>', headers: { 'content-type': 'text/plain' }, auth: 'admin' },
      // A foreign page may post these without a CORS preflight: JSON in them must never be accepted.
      ...SIMPLE_TYPES_CLAIMING_JSON.map((type) => ({ name: `JSON under ${type}`, params: ok, body: '{}', headers: { 'content-type': type }, auth: 'admin' as const, mustRefuse: true })),
    );
  }
  return cases;
}

let adminToken = '';
const expiredToken = 'E'.repeat(43);

beforeAll(async () => {
  const phone = randomPhone();
  await db.insertInto('tb_user').values({ phone, nick_name: 'sweep-admin', role: 'admin', password: null }).execute();
  const u = await db.selectFrom('tb_user').select('id').where('phone', '=', phone).executeTakeFirstOrThrow();
  adminToken = await createSession(redis, { id: u.id, nickName: 'sweep-admin', icon: '', role: 'admin' });
  // Something for bodyless actions (replay-all…) to act on, so a garbled request that slipped
  // through would show up as a write. A body of this run's own: a poison body is filed once while
  // its row is dead (migration 012), and an earlier run's row may still be.
  await db.insertInto('tb_order_dead_letter').values({ order_id: null, payload: JSON.stringify({ v: 1, sweep: phone }), reason: 'hostile sweep fixture', attempts: 1 }).execute();
});

afterAll(async () => {
  await closeMq();
  await closeDb();
  await closeRedis();
});

async function headersFor(c: Case): Promise<Headers> {
  const h = new Headers({ host: 'localhost:3000', origin: 'http://localhost:3000', ...c.headers });
  if (c.body !== undefined && !h.has('content-type')) h.set('content-type', 'application/json');
  switch (c.auth) {
    case 'admin': h.set('authorization', `Bearer ${adminToken}`); break;
    case 'forged': h.set('authorization', `Bearer ${'F'.repeat(43)}`); break;
    case 'expired': h.set('authorization', `Bearer ${expiredToken}`); break;
    case 'wrongSecretJwt':
      h.set('cookie', `${SESSION_COOKIE}=${await encode({ token: { sessionToken: adminToken, role: 'admin' }, secret: 'not-the-secret-'.repeat(3) })}`);
      break;
    case 'forgedRoleJwt':
      h.set('cookie', `${SESSION_COOKIE}=${await encode({ token: { sessionToken: 'Z'.repeat(43), role: 'admin' }, secret: env.AUTH_SECRET })}`);
      break;
  }
  return h;
}

describe('hostile input sweep over every route handler', async () => {
  const routes = await loadRoutes();

  it('finds the route handlers', () => {
    expect(routes.length).toBeGreaterThan(4);
  });

  for (const r of routes) {
    for (const [method, handler] of Object.entries(r.methods)) {
      it(`${method} ${r.url}`, async () => {
        for (const c of casesFor(r, method)) {
          const before = await snapshot();
          const url = 'http://localhost:3000' + r.url.replace(/\[(\w+)\]/g, (_, p: string) => encodeURIComponent(c.params?.[p] ?? NO_SUCH_ID));
          const req = new Request(url, { method, headers: await headersFor(c), body: c.body });
          // TEST_DOOR=hot: the hot routes are swept over HTTP through the hot server instead.
          const res = (testDoor === 'hot' && (await throughHotServer(handler, req, c.params ?? {}))) || (await handler(req, { params: Promise.resolve(c.params ?? {}) }));
          const isStream = res.headers.get('content-type')?.includes('text/event-stream');
          const text = isStream ? '' : await res.text();
          if (isStream) await res.body?.cancel();
          const label = `${method} ${r.url} · ${c.name} → ${res.status} ${text.slice(0, 160)}`;
          expect(res.status, label).toBeLessThan(500);
          if (c.mustRefuse) expect(res.status, label).toBeGreaterThanOrEqual(400);
          if (res.status >= 400) {
            const body = JSON.parse(text);
            expect(typeof body.error?.code, label).toBe('string');
            expect(body.error.message.length, label).toBeGreaterThan(0);
            expect(text, label).not.toMatch(/at \w+ \(|node_modules|ECONNREFUSED|SELECT |stack/i);
          }
          if (c.auth !== 'admin' && !isStream) {
            // Without a real session nothing but public reads may succeed.
            if (res.status < 400) expect(method, label).toBe('GET');
          }
          const after = await snapshot();
          expect(after.counts, label).toEqual(before.counts);
          // A public read may fill the cache and take the rebuild lock; that bookkeeping must expire.
          // Keys named after what the caller sent (an unknown id) may not outlive the "not in DB"
          // marker, and one request creates only a handful of keys: a stranger walking random ids
          // cannot grow Redis faster than the markers expire.
          const added = [...after.keys].filter((k) => !before.keys.has(k));
          expect(added.length, `${label}: new keys ${added.join(' ')}`).toBeLessThanOrEqual(MAX_NEW_KEYS_PER_REQUEST);
          const named = Object.values(c.params ?? {}).filter((v) => v.length > 0);
          const lasting = [];
          for (const k of added) {
            const ttl = await redis.pttl(k);
            const strangerNamed = named.some((v) => k.includes(v));
            if (ttl < 0 || (strangerNamed && ttl > NULL_MARKER_MAX_MS)) lasting.push(`${k} (ttl ${ttl} ms)`);
          }
          expect(lasting, label).toEqual([]);
        }
      });
    }
  }
});

describe('hostile uploads', () => {
  const bodies: [string, Buffer | string, string][] = [
    ...fakeImages,
    ['decompression bomb named .jpg', pngBomb(), 'image/jpeg'],
    ['body over 5 MB', Buffer.alloc(5 * 1024 * 1024 + 1, 0xff), 'image/jpeg'],
    ['empty body', '', 'image/png'],
  ];
  it.each(bodies)('POST /api/uploads · %s → 4xx, nothing written', async (_, body, type) => {
    for (const fileName of ['../../etc/passwd.jpg', 'a/../../x.webp', 'C:\\Windows\\x.jpg', '%2e%2e%2fx.jpg']) {
      const before = await snapshot();
      const headers = await headersFor({ name: 'upload', auth: 'admin', headers: { 'content-type': type, 'x-file-name': fileName } });
      const res = await uploadImage(new Request('http://localhost:3000/api/uploads', { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) }), { params: Promise.resolve({}) });
      const text = await res.text();
      expect(res.status, text).toBeGreaterThanOrEqual(400);
      expect(res.status, text).toBeLessThan(500);
      expect(JSON.parse(text).error.code).toMatch(/^(UNSUPPORTED_MEDIA_TYPE|PAYLOAD_TOO_LARGE|BAD_REQUEST)$/);
      expect((await snapshot()).counts).toEqual(before.counts);
    }
  });
});
