/**
 * The hot server itself, over real HTTP against real Redis/MySQL: which door a request takes, the
 * peer address it carries, and shedding above the in-flight limit. (The grab, order and sweep
 * suites run through it with TEST_DOOR=hot.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';

// A low per-IP limit makes "which address did the server believe" observable.
vi.hoisted(() => {
  process.env.SECKILL_IP_PER_SECOND = '3';
  process.env.SECKILL_USER_PER_SECOND = '100';
});

import { hotRoutes } from '@/app/api/hot-routes';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { closeDb, db } from '@/lib/db/client';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { createHotServer, SHED_REPLY } from '@/lib/hot/server';
import { throughHotServer } from '@/e2e/support/hot-door';
import { writeReply } from '@/lib/hot/node-adapter';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { route } from '@/lib/http/route';
import { createTestUsers, createTestVoucher, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const servers: http.Server[] = [];

afterAll(async () => {
  for (const s of servers) s.close();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

async function start(maxInFlight: number, seen: string[] = []): Promise<string> {
  const server = createHotServer({
    routes: hotRoutes,
    maxInFlight,
    fallback: (req, res) => {
      seen.push(String(req.headers[PEER_HEADER]));
      writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: 'fallback' } } });
    },
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('hot server', () => {
  it('answers a hot route itself and hands any other path to the fallback, both with the socket address as peer', async () => {
    const seen: string[] = [];
    const base = await start(100, seen);
    const hot = await fetch(`${base}/api/seckill/123`, { method: 'POST', headers: { [PEER_HEADER]: '6.6.6.6' } });
    expect(hot.status).toBe(401);
    expect(await hot.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: '请先登录' } });
    const other = await fetch(`${base}/api/shops/1`, { headers: { [PEER_HEADER]: '6.6.6.6' } });
    expect((await other.json()).error.message).toBe('fallback');
    // GET on the grab path is not a hot route either (Next answers 405 for it).
    await fetch(`${base}/api/seckill/123`);
    expect(seen).toEqual(['127.0.0.1', '127.0.0.1']);
    const req = new Request('http://localhost:3000/x', { method: 'POST' });
    expect(await throughHotServer(grabRoute, req, { voucherId: '1' })).not.toBeNull();
  });

  it('a client cannot pick its own address with the peer header: the per-IP limit still applies', async () => {
    const base = await start(100);
    const voucherId = await createTestVoucher(db, redis, { stock: 50 });
    const users = await createTestUsers(db, redis, 8);
    const statuses = await Promise.all(
      users.map(async (u, i) => {
        const res = await fetch(`${base}/api/seckill/${voucherId}`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, [PEER_HEADER]: `10.9.9.${i}` } });
        return res.status;
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('above the in-flight limit a hot route answers 503 + Retry-After at once; the requests in flight are served', async () => {
    // A hot route whose handler waits for the test: exactly 2 requests can be in flight.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const slow = route({ auth: 'none' }, async () => {
      await gate;
      return { ok: true };
    });
    const server = createHotServer({ routes: [{ name: 'slow', method: 'GET', path: '/api/slow', handler: slow }], maxInFlight: 2, fallback: () => {} });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
    const answers: { status: number; retryAfter?: string; body: string }[] = [];
    const get = () =>
      new Promise<void>((resolve, reject) => {
        http
          .get(`${base}/api/slow`, { agent }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => (answers.push({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body }), resolve()));
          })
          .on('error', reject);
      });
    const all = Promise.all(Array.from({ length: 10 }, get));
    // The 8 over the limit are answered while the 2 in flight still wait.
    await waitFor('8 shed answers', async () => answers.length >= 8, 10_000, 10);
    expect(answers).toHaveLength(8);
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.retryAfter).toBe('1');
      expect(JSON.parse(a.body)).toEqual(SHED_REPLY.body);
    }
    open();
    await all;
    agent.destroy();
    expect(answers.slice(8)).toEqual([
      { status: 200, retryAfter: undefined, body: '{"data":{"ok":true}}' },
      { status: 200, retryAfter: undefined, body: '{"data":{"ok":true}}' },
    ]);
  });
});
