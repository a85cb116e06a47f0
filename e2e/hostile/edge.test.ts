/**
 * The hot door's HTTP edge (real sockets, real services). Each failed on the old server (found by a
 * review helper):
 *   1. a request pipelined behind one whose body is refused (413, Connection: close) must not be
 *      executed unless its answer is sent: a grab that runs but is never answered leaves a buyer
 *      with an order they never heard of (the next try says ALREADY_BOUGHT);
 *   2. node's own answers (a malformed request's 400, too-large headers' 431, the headers
 *      deadline's 408) go out on the same server as the API's and must carry its security headers;
 *   3. HEAD on a hot GET route is answered as GET, as Next answers it (a hot-only server said 404).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.SECKILL_IP_PER_SECOND = '10000';
});

import { hotRoutes } from '@/app/api/hot-routes';
import { closeDb, db } from '@/lib/db/client';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { createTestUsers, createTestVoucher, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const servers: http.Server[] = [];
let port = 0;

beforeAll(async () => {
  const server = createHotServer({
    routes: hotRoutes,
    maxInFlight: 100,
    headersTimeoutMs: 1000,
    requestTimeoutMs: 3000,
    fallback: (_req, res) => writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: 'fallback' } } }),
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const s of servers) s.close();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

/** Writes `data` on a fresh connection; resolves with everything received once it closes (or after `ms`). */
function exchange(data: string | Buffer, ms = 5000, trickle = false): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (c: Buffer) => (out += c.toString('latin1')));
    s.on('error', () => {});
    s.on('close', () => resolve(out));
    if (!trickle) s.write(data);
    else s.write(String(data).slice(0, 5)); // then nothing more: the headers never end
    setTimeout(() => s.destroy(), ms).unref();
  });
}

function statuses(received: string): number[] {
  return [...received.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
}

function headersOf(received: string): Record<string, string> {
  const head = received.slice(0, received.indexOf('\r\n\r\n'));
  const h: Record<string, string> = {};
  for (const l of head.split('\r\n').slice(1)) h[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
  return h;
}

describe('a request pipelined behind a refused body', () => {
  it('is either answered or never run: no grab happens that its client is not told about', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 20 });
    const users = await createTestUsers(db, redis, 8);
    const unanswered: string[] = [];
    for (const u of users) {
      const auth = `authorization: Bearer ${u.token}\r\n`;
      const refused = Buffer.concat([
        Buffer.from(`POST /api/seckill/${voucherId} HTTP/1.1\r\nhost: t\r\n${auth}content-type: application/json\r\ncontent-length: 70000\r\n\r\n`),
        Buffer.alloc(70000, ' '),
      ]);
      const grab = Buffer.from(`POST /api/seckill/${voucherId} HTTP/1.1\r\nhost: t\r\n${auth}content-length: 0\r\n\r\n`);
      const got = statuses(await exchange(Buffer.concat([refused, grab])));
      expect(got[0]).toBe(413);
      if (got.length > 1) continue; // the pipelined grab was answered: the buyer knows
      // Not answered, so it must not have run: the same buyer's grab on a fresh connection is a first one.
      const again = await exchange(Buffer.from(grab.toString().replace('content-length: 0', 'connection: close\r\ncontent-length: 0')), 5000);
      if (statuses(again)[0] !== 200) unanswered.push(again.slice(again.indexOf('\r\n\r\n') + 4));
    }
    expect(unanswered).toEqual([]);
  }, 60_000);
});

describe("node's own error answers carry the API's security headers", () => {
  const expectSecured = (received: string, status: number) => {
    expect(statuses(received)[0]).toBe(status);
    const h = headersOf(received);
    expect(h).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
    expect(h['content-security-policy']).toContain("default-src 'none'");
  };

  it('400 for a malformed request (Content-Length with Transfer-Encoding)', async () => {
    expectSecured(await exchange('POST /api/seckill/1 HTTP/1.1\r\nhost: t\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n'), 400);
  });

  it('431 for headers past the limit', async () => {
    expectSecured(await exchange(`GET /api/shops/1/vouchers HTTP/1.1\r\nhost: t\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`), 431);
  });

  it('408 for headers that never end', async () => {
    expectSecured(await exchange('GET /api/shops/1/vouchers HTTP/1.1\r\n', 5000, true), 408);
  });
});

describe('HEAD on a hot GET route, on a hot-only web server (WEB_PART=hot)', () => {
  it('answers as GET does (as Next answers HEAD for a GET route), not 404', async () => {
    const { hotOnlyFallback } = await import('@/workers/hot-only');
    const server = createHotServer({ routes: hotRoutes, maxInFlight: 100, fallback: hotOnlyFallback });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const hotOnly = (server.address() as AddressInfo).port;
    const ask = (method: string) =>
      new Promise<number>((resolve, reject) => {
        const r = http.request({ host: '127.0.0.1', port: hotOnly, method, path: '/api/shops/1/vouchers', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        r.on('error', reject);
        r.end();
      });
    const get = await ask('GET');
    expect(get).toBe(200);
    expect(await ask('HEAD')).toBe(get);
  });
});
