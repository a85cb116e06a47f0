/**
 * A body refused as too large closes its connection. The server stops reading such a body (it
 * never buffers more than the cap), so a kept-alive connection would leave the client's next
 * request queued behind bytes nobody reads, until the idle sweep resets it a minute later. The
 * refusal says `Connection: close` and the connection ends once it is sent — on the hot server's
 * routes and on the routes Next serves behind it (a chunked upload, a chunked JSON body), checked
 * on the real web server (workers/web-server.ts, after `npx next build`) over raw sockets. A
 * body read to the end keeps its connection. /api/health, served by Next, carries the API's
 * security headers.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebServer, stopWebServer } from '@/e2e/support/web-server';
import { hotRoutes } from '@/app/api/hot-routes';
import { GET as health } from '@/app/api/health/route';
import { closeDb, db } from '@/lib/db/client';
import { parseJson } from '@/lib/http/parse';
import { route } from '@/lib/http/route';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { createTestUsers, createTestVoucher, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { z } from 'zod';

const servers: http.Server[] = [];
let web: ChildProcess | undefined;

afterAll(async () => {
  for (const s of servers) s.close();
  stopWebServer(web);
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One raw connection: write bytes, read whole answers (content-length or chunked), see when it closes. */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  let closed = false;
  const wake: (() => void)[] = [];
  socket.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    wake.splice(0).forEach((w) => w());
  });
  socket.on('error', () => {}); // the server may reset a connection it stopped reading
  socket.on('close', () => {
    closed = true;
    wake.splice(0).forEach((w) => w());
  });
  const parse = (): Answer | null => {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = buf.subarray(0, end).toString().split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
    const status = Number(lines[0]!.split(' ')[1]);
    let rest = buf.subarray(end + 4);
    let body = '';
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const nl = rest.indexOf('\r\n');
        if (nl < 0) return null;
        const size = parseInt(rest.subarray(0, nl).toString(), 16);
        if (rest.length < nl + 2 + size + 2) return null;
        body += rest.subarray(nl + 2, nl + 2 + size).toString();
        rest = rest.subarray(nl + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (rest.length < length) return null;
      body = rest.subarray(0, length).toString();
      rest = rest.subarray(length);
    }
    buf = rest;
    return { status, headers, body };
  };
  return {
    socket,
    write: (b: string | Buffer) => new Promise<void>((r) => (socket.destroyed ? r() : socket.write(b, () => r()))),
    /** The next whole answer, or null if the connection closed (or `ms` passed) first. */
    async answer(ms = 10_000): Promise<Answer | null> {
      const deadline = Date.now() + ms;
      for (;;) {
        const a = parse();
        if (a) return a;
        if (closed || Date.now() > deadline) return null;
        await Promise.race([new Promise<void>((r) => wake.push(r)), new Promise((r) => setTimeout(r, 50))]);
      }
    },
    /** Resolves true once closed, false if still open after `ms`. */
    async closedWithin(ms: number): Promise<boolean> {
      const deadline = Date.now() + ms;
      while (!closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return closed;
    },
  };
}

/** A chunked request whose body is `total` bytes in 64 KB chunks, written as fast as the socket takes them. */
async function sendChunked(c: ReturnType<typeof connection>, head: string, total: number, fill = 'a'): Promise<void> {
  await c.write(`${head}transfer-encoding: chunked\r\n\r\n`);
  const piece = Buffer.alloc(64 * 1024, fill);
  // The server may stop reading (and close) midway: the writes then go nowhere, which is the point.
  for (let sent = 0; sent < total && !c.socket.destroyed; sent += piece.length) {
    void c.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
    if (c.socket.writableLength > 1 << 20) await new Promise((r) => setTimeout(r, 5));
  }
  if (!c.socket.destroyed) void c.write('0\r\n\r\n');
}

/** 413, `Connection: close`, and the connection really ends (the client is not left waiting). */
async function expectRefusedAndClosed(c: ReturnType<typeof connection>): Promise<void> {
  const a = await c.answer();
  expect(a?.status).toBe(413);
  expect(JSON.parse(a!.body).error.code).toBe('PAYLOAD_TOO_LARGE');
  expect(a!.headers.connection).toBe('close');
  expect(await c.closedWithin(3000)).toBe(true);
}

const jsonEcho = route({ auth: 'none' }, async ({ req }) => parseJson(req, z.object({ a: z.string() })));

describe('a refused body closes its connection: the hot server', () => {
  let port = 0;
  beforeAll(async () => {
    const server = createHotServer({
      routes: [...hotRoutes, { name: 'json', method: 'POST', path: '/api/json', handler: jsonEcho }],
      maxInFlight: 100,
      keepAliveMs: 65_000,
      fallback: (_req, res) => writeReply(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: 'fallback' } } }),
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });

  it('a chunked 1 MB JSON body: 413, Connection: close, closed; a body under the cap keeps the connection', async () => {
    const c = connection(port);
    await sendChunked(c, 'POST /api/json HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n', 1 << 20);
    await expectRefusedAndClosed(c);

    const ok = connection(port);
    await ok.write('POST /api/json HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{"a":"b"}');
    const first = await ok.answer();
    expect([first?.status, first?.headers.connection]).toEqual([200, 'keep-alive']);
    await ok.write('POST /api/json HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{"a":"c"}');
    expect((await ok.answer())?.body).toBe('{"data":{"a":"c"}}');
    ok.socket.destroy();
  });

  it('a chunked body on the grab, and a declared 6 MB one: 413 and closed', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    const [u] = await createTestUsers(db, redis, 1);
    const c = connection(port);
    await sendChunked(c, `POST /api/seckill/${voucherId} HTTP/1.1\r\nhost: t\r\nauthorization: Bearer ${u!.token}\r\ncontent-type: application/json\r\n`, 1 << 20);
    await expectRefusedAndClosed(c);

    const declared = connection(port);
    await declared.write(`POST /api/seckill/${voucherId} HTTP/1.1\r\nhost: t\r\nauthorization: Bearer ${u!.token}\r\ncontent-type: application/json\r\ncontent-length: ${6 << 20}\r\n\r\n`);
    await declared.write(Buffer.alloc(200 * 1024, ' '));
    await expectRefusedAndClosed(declared);
  });
});

describe.skipIf(!existsSync('.next/BUILD_ID'))('a refused body closes its connection: the real web server (Next behind the hot server)', () => {
  const port = Number(process.env.E2E_PORT ?? 3201);
  let token = '';
  let voucherId = '';

  beforeAll(async () => {
    web = await startWebServer(port);
    token = (await createTestUsers(db, redis, 1))[0]!.token;
    voucherId = await createTestVoucher(db, redis, { stock: 1 });
  }, 120_000);

  it('a chunked 6 MB upload (app/api/uploads, through Next): 413, Connection: close, closed', async () => {
    const c = connection(port);
    await sendChunked(c, `POST /api/uploads HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\ncontent-type: image/png\r\n`, 6 << 20);
    await expectRefusedAndClosed(c);
  });

  it('a chunked 1 MB JSON body to a Next JSON route: 413, Connection: close, closed', async () => {
    const c = connection(port);
    await sendChunked(c, `POST /api/blogs HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\n`, 1 << 20);
    await expectRefusedAndClosed(c);
  });

  it('a chunked 1 MB body to the grab (a hot route on the same server): 413, Connection: close, closed', async () => {
    const c = connection(port);
    await sendChunked(c, `POST /api/seckill/${voucherId} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\n`, 1 << 20);
    await expectRefusedAndClosed(c);
  });

  it('requests whose body is read (or that have none) keep their connection through Next; /api/health carries the security headers', async () => {
    const c = connection(port);
    await c.write(`GET /api/health HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    const h = await c.answer();
    expect(h?.status).toBe(200);
    expect(h?.headers).toMatchObject({
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'strict-origin-when-cross-origin',
    });
    expect(h?.headers.connection).not.toBe('close');
    // A small JSON body Next reads whole (refused by validation, not for its size): still alive.
    const body = '{"title":""}';
    await c.write(`POST /api/blogs HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    const v = await c.answer();
    expect(v?.status).toBe(400);
    expect(v?.headers.connection).not.toBe('close');
    await c.write(`GET /api/health HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    expect((await c.answer())?.status).toBe(200);
    // next-auth's own answers (not through lib/http/route.ts) carry them too, cookies kept.
    await c.write(`GET /api/auth/csrf HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    const auth = await c.answer();
    expect(auth?.status).toBe(200);
    expect(auth?.headers).toMatchObject({ 'content-security-policy': "default-src 'none'; frame-ancestors 'none'", 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
    expect(auth?.headers['set-cookie']).toMatch(/^next-auth\.[\w.-]+=.*HttpOnly/);
    expect(JSON.parse(auth!.body).csrfToken).toMatch(/^[0-9a-f]{64}$/);
    c.socket.destroy();
  });
});

describe('/api/health', () => {
  it('answers with the API security headers (HSTS behind HTTPS), called as Next calls it', async () => {
    const plain = await health(new Request('http://127.0.0.1/api/health'));
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
    expect(plain.headers.get('strict-transport-security')).toBeNull();
    const https = await health(new Request('http://127.0.0.1/api/health', { headers: { 'x-forwarded-proto': 'https' } }));
    expect(https.headers.get('strict-transport-security')).toContain('max-age=');
  });
});
