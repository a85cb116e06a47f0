/**
 * The refused grab's fast lane: with the caller's session in this process's cache (a Bearer
 * token, or a browser's cookie once its decode is remembered, CSRF rule included) and the
 * voucher's refusal in its memory, the grab route's core answers with a value, not a promise (so
 * nothing can have gone to Redis), and the answer is the one Redis gave the first time, through
 * both doors. And the hot server's batched writes: one reply that cannot be written does not
 * strand the rest of its batch.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';

// The suites run without the session cache (e2e/support/setup-env.ts); this one is about it.
vi.hoisted(() => {
  process.env.SESSION_CACHE_MS = '60000';
});

import { encode } from 'next-auth/jwt';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { authSecret, SESSION_COOKIE } from '@/lib/auth/cookie';
import { openSessionCache } from '@/lib/auth/session-cache';
import { closeDb, db } from '@/lib/db/client';
import { queueReply } from '@/lib/hot/node-adapter';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { openRefusalMemory } from '@/lib/seckill/refusal-memory';
import { createTestUsers, createTestVoucher, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { throughHotServer } from '@/e2e/support/hot-door';

afterAll(async () => {
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

describe('refused grab without a promise', () => {
  it('a remembered sold out for a cached session: a value, not a promise, and the same answer as Redis gave', async () => {
    const sessions = openSessionCache(redis);
    const memory = openRefusalMemory(redis).memory;
    await waitFor('both memories subscribed', async () => sessions.cache.isTrusted && memory.isTrusted);
    const [u] = await createTestUsers(db, redis, 1);
    // The preheat forgets the voucher here at once and again when its own pub/sub message comes
    // back; a grab sent before that echo arrives is rightly not remembered (the epoch rule), so
    // wait for both (on a loaded machine the echo can land inside the first grab).
    const before = memory.mark();
    const voucherId = await createTestVoucher(db, redis, { stock: 0 });
    await waitFor('the preheat notice and its echo', async () => memory.mark() >= before + 2, 5000, 5);
    const req = () => new Request(`http://127.0.0.1/api/seckill/${voucherId}`, { method: 'POST', headers: { authorization: `Bearer ${u!.token}` } });

    const first = grabRoute.core(req(), { voucherId }); // the session and the voucher from Redis
    expect(first).toBeInstanceOf(Promise);
    const fromRedis = await first;
    expect(fromRedis).toMatchObject({ status: 410, body: { error: { code: 'SOLD_OUT' } } });

    const again = grabRoute.core(req(), { voucherId });
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toEqual(fromRedis); // status, body and the API's security headers

    // The same answer through Next's door and over HTTP through the hot server.
    const viaNext = await grabRoute(req(), { params: Promise.resolve({ voucherId }) });
    expect(viaNext.status).toBe(410);
    expect(await viaNext.json()).toEqual(fromRedis.body);
    const viaHot = await throughHotServer(grabRoute, req(), { voucherId });
    expect(viaHot!.status).toBe(410);
    expect(await viaHot!.json()).toEqual(fromRedis.body);

    // A browser's grab (the session cookie, same origin): a value too, once the cookie is remembered.
    const cookie = await encode({ token: { sessionToken: u!.token }, secret: authSecret, maxAge: 3600 });
    const browser = () =>
      new Request(`http://127.0.0.1/api/seckill/${voucherId}`, { method: 'POST', headers: { cookie: `${SESSION_COOKIE}=${cookie}`, host: '127.0.0.1', origin: 'http://127.0.0.1' } });
    expect(await grabRoute.core(browser(), { voucherId })).toEqual(fromRedis); // decodes the cookie
    const fromMemory = grabRoute.core(browser(), { voucherId });
    expect(fromMemory).not.toBeInstanceOf(Promise);
    expect(fromMemory).toEqual(fromRedis);
    // Another origin hears the same: a remembered sold out is the same for whoever asks and changes
    // nothing, so it is answered before the caller is resolved (route's `known`, lib/http/route.ts).
    const foreign = () => grabRoute.core(new Request(`http://127.0.0.1/api/seckill/${voucherId}`, { method: 'POST', headers: { cookie: `${SESSION_COOKIE}=${cookie}`, host: '127.0.0.1', origin: 'https://evil.example' } }), { voucherId });
    expect(foreign()).toEqual(fromRedis);

    // Control: once the memory forgets the voucher, the core goes back to Redis...
    memory.forget(voucherId);
    const asked = grabRoute.core(req(), { voucherId });
    expect(asked).toBeInstanceOf(Promise);
    expect(await asked).toEqual(fromRedis);
    // ...and the CSRF rule holds for an answer that depends on who asks: another origin is refused.
    // (Forgotten again first: the script's answer above taught the memory again.)
    memory.forget(voucherId);
    expect(await foreign()).toMatchObject({ status: 403, body: { error: { code: 'CSRF' } } });
  });
});

describe('batched replies', () => {
  it('a reply that cannot be written (a bad header) is dropped with its socket; the rest of its batch still goes out', async () => {
    let bad: http.ServerResponse | undefined;
    const server = http.createServer((req, res) => {
      if (req.url === '/bad') {
        bad = res; // answered in /a's turn, so both replies are in one batch
        return;
      }
      if (bad) queueReply(bad, { status: 200, body: {}, headers: { 'x-bad': 'line\nbreak' } });
      queueReply(res, { status: 200, body: { data: req.url } });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const failing = fetch(`${base}/bad`).catch((e: unknown) => e);
    await waitFor('the first request arrived', async () => bad !== undefined);
    const answer = await fetch(`${base}/a`);
    expect(await answer.json()).toEqual({ data: '/a' });
    expect(await failing).toBeInstanceOf(Error); // its socket was closed, not left hanging
    server.close();
  });
});
