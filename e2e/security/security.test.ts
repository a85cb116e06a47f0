/**
 * Security checks (proof suite): cookie-authenticated writes need our own origin, a forged or
 * tampered JWT is nobody, the client bundles hold no server secret, and production never hands
 * out SMS codes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { encode } from 'next-auth/jwt';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { env } from '@/lib/env';
import { SESSION_COOKIE } from '@/lib/auth/cookie';
import { callRoute, loginNewUser, randomPhone } from '@/e2e/support/helpers';
import { keys } from '@/lib/redis/keys';
import { POST as sendCodeRoute } from '@/app/api/user/code/route';
import { POST as loginRoute } from '@/app/api/user/login/route';
import { NextRequest } from 'next/server';
import { proxy } from '@/proxy';
import { POST as logoutRoute } from '@/app/api/user/logout/route';
import { GET as meRoute } from '@/app/api/user/me/route';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

async function cookieFor(sessionToken: string, secret = env.AUTH_SECRET): Promise<string> {
  return `${SESSION_COOKIE}=${await encode({ token: { sessionToken }, secret })}`;
}

describe('CSRF: cookie-authenticated state changes', () => {
  it('a cross-site POST carrying the cookie is refused and changes nothing', async () => {
    const { token } = await loginNewUser();
    const cookie = await cookieFor(token);
    const evil = await callRoute(logoutRoute, { method: 'POST', headers: { cookie, origin: 'https://evil.example', host: 'localhost:3000' } });
    expect(evil.status).toBe(403);
    expect(evil.json.error.code).toBe('CSRF');
    const noOrigin = await callRoute(logoutRoute, { method: 'POST', headers: { cookie, host: 'localhost:3000' } });
    expect(noOrigin.status).toBe(403);
    // X-Forwarded-Host naming the other origin is the client's own word here (no proxy of ours sent it).
    const forwarded = await callRoute(logoutRoute, { method: 'POST', headers: { cookie, origin: 'https://evil.example', host: 'localhost:3000', 'x-forwarded-host': 'evil.example' } });
    expect(forwarded.status).toBe(403);
    // The session survived both attempts…
    expect((await callRoute(meRoute, { token })).status).toBe(200);
    // …and the same request from our own origin works.
    const own = await callRoute(logoutRoute, { method: 'POST', headers: { cookie, origin: 'http://localhost:3000', host: 'localhost:3000' } });
    expect(own.status).toBe(200);
    expect(own.headers.get('set-cookie')).toMatch(/HttpOnly/);
    expect((await callRoute(meRoute, { token })).status).toBe(401);
  });

  it('reads with the cookie need no origin', async () => {
    const { token } = await loginNewUser();
    const r = await callRoute(meRoute, { headers: { cookie: await cookieFor(token) } });
    expect(r.status).toBe(200);
  });

  it('a JWT signed with another secret, or carrying a made-up token, is nobody', async () => {
    const { token } = await loginNewUser();
    const forged = await callRoute(meRoute, { headers: { cookie: await cookieFor(token, 'x'.repeat(40)) } });
    expect(forged.status).toBe(401);
    const madeUp = await callRoute(meRoute, { headers: { cookie: await cookieFor('A'.repeat(43)) } });
    expect(madeUp.status).toBe(401);
    const garbage = await callRoute(meRoute, { headers: { cookie: `${SESSION_COOKIE}=eyJhbGciOiJub25lIn0.e30.` } });
    expect(garbage.status).toBe(401);
  });
});

describe('cross-site simple posts to the login endpoints', () => {
  // A foreign page can send these content types without a CORS preflight.
  it.each(['text/plain;charset=application/json', 'text/plain; application/json', 'application/x-www-form-urlencoded; x=application/json'])('%s → 415, no code sent', async (type) => {
    const phone = randomPhone();
    const code = await callRoute(sendCodeRoute, { rawBody: JSON.stringify({ phone }), headers: { 'content-type': type } });
    expect(code.status).toBe(415);
    expect(await redis.get(keys.devSms(phone))).toBeNull();
    const login = await callRoute(loginRoute, { rawBody: JSON.stringify({ phone, code: '123456' }), headers: { 'content-type': type } });
    expect(login.status).toBe(415);
  });

  it('application/json with a UTF-8 charset is still JSON', async () => {
    const r = await callRoute(loginRoute, { rawBody: JSON.stringify({ phone: '1', code: '1' }), headers: { 'content-type': 'Application/JSON; charset="UTF-8"' } });
    expect(r.status).toBe(400); // parsed, then refused by validation
  });
});

describe('security headers', () => {
  const common = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'strict-origin-when-cross-origin', 'x-frame-options': 'DENY' };

  it('pages: a fresh CSP nonce per request handed to Next, frame-ancestors none, HSTS only over HTTPS', async () => {
    const a = proxy(new NextRequest('http://localhost:3000/shops/1'));
    const b = proxy(new NextRequest('https://hmdp.example/login'));
    const csp = a.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{24}' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-eval'); // only the development server gets eval, for React's tooling
    expect(b.headers.get('content-security-policy')).not.toBe(csp);
    expect(a.headers.get('x-middleware-request-content-security-policy')).toBe(csp); // Next reads the nonce from here
    for (const [k, v] of Object.entries(common)) expect(a.headers.get(k), k).toBe(v);
    expect(a.headers.get('strict-transport-security')).toBeNull();
    expect(b.headers.get('strict-transport-security')).toMatch(/max-age=31536000/);
  });

  it('API answers, success and failure alike', async () => {
    const { token } = await loginNewUser();
    for (const r of [await callRoute(meRoute, { token }), await callRoute(meRoute), await callRoute(loginRoute, { rawBody: '{', headers: { 'content-type': 'application/json' } })]) {
      expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      for (const [k, v] of Object.entries(common)) expect(r.headers.get(k), k).toBe(v);
    }
  });
});

describe('client bundles', () => {
  const staticDir = path.join(process.cwd(), '.next', 'static');

  it('hold no server secret or connection string', () => {
    expect(existsSync(staticDir), 'run `next build` first (scripts/test.sh does)').toBe(true);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = path.join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(js|css|html|json|map)$/.test(f)) files.push(p);
      }
    };
    walk(staticDir);
    expect(files.length).toBeGreaterThan(0);
    const local = existsSync('.env.local') ? readFileSync('.env.local', 'utf8') : '';
    const secrets = [
      env.AUTH_SECRET,
      env.DATABASE_URL,
      env.REDIS_URL,
      env.RABBITMQ_URL,
      ...[...local.matchAll(/^AUTH_SECRET=(.+)$/gm)].map((m) => m[1]!.trim()),
    ].filter((s) => s.length >= 12);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of secrets) expect(text.includes(s), `${s.slice(0, 6)}… found in ${f}`).toBe(false);
    }
  });
});

describe('production mode', () => {
  // A real child process with NODE_ENV=production: the dev SMS provider must refuse to work.
  const script = `(async () => {
    const { redis, closeRedis } = await import('@/lib/redis/client');
    const { POST } = await import('@/app/api/user/code/route');
    const res = await POST(new Request('http://localhost/api/user/code', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phone: '13700000001' }) }),
      { params: Promise.resolve({}) });
    const stored = await redis.get('dev:sms:{13700000001}');
    console.log(JSON.stringify({ status: res.status, body: await res.text(), stored }));
    await closeRedis();
    process.exit(0);
  })();`;

  it('the dev SMS provider refuses to send and no code is stored or returned', () => {
    const out = execFileSync('npx', ['tsx', '--eval', script], {
      env: { ...process.env, NODE_ENV: 'production', ALLOW_DEV_SMS_IN_PRODUCTION: 'false', RATE_LIMITS: 'false', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
    const r = JSON.parse(out.trim().split('\n').pop()!);
    expect(r.status).toBe(503);
    expect(r.stored).toBeNull();
    expect(r.body).not.toMatch(/\d{6}/);
  });
});
