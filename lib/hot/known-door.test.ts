/**
 * The known-answer door (lib/hot/known-door.ts) over raw TCP: a connection's first request with a
 * known answer is answered before node:http reads it, byte for byte as node:http answers it; a
 * kept-alive connection goes on through node; everything odd is node's. Real sockets.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createHotServer } from '@/lib/hot/server';
import { parseWhole } from '@/lib/hot/known-door';
import { route } from '@/lib/http/route';
import { closeRedis } from '@/lib/redis/client';
import { takeAnswer } from '@/e2e/support/raw-http';

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) s.close();
  await closeRedis();
});

const SOLD_OUT = Object.freeze({ state: 'soldout' });
const seen = { known: 0, handled: 0, peer: '' as string | null };
/** Known (frozen, shared) for /api/sale/1; unknown for any other id; reads the peer header it is shown. */
const sale = route(
  {
    auth: 'none',
    known: (params: Record<string, string>, headers) => {
      seen.peer = headers.get('x-hmdp-peer');
      if (params.id === '9') throw new Error('a known answer that throws');
      if (params.id !== '1') return undefined;
      seen.known++;
      return SOLD_OUT;
    },
  },
  async ({ req, params }) => {
    seen.handled++;
    return { id: params.id, body: req.method === 'POST' ? await req.text() : null };
  },
);

/** Requests node:http parsed on the last server ('request' events), and what observe was told. */
let parsedByNode = 0;
const observed: [string, number][] = [];

async function start(opts: { knownDoor?: boolean } = {}): Promise<number> {
  parsedByNode = 0;
  observed.length = 0;
  const server = createHotServer({
    routes: [
      { name: 'sale', method: 'POST', path: '/api/sale/[id]', handler: sale },
      { name: 'sale-get', method: 'GET', path: '/api/sale/[id]', handler: sale },
    ],
    maxInFlight: 100,
    keepAliveMs: 5000,
    knownDoor: opts.knownDoor ?? true,
    observe: (name, status) => observed.push([name, status]),
    fallback: (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('fallback');
    },
  });
  servers.push(server);
  server.on('request', () => parsedByNode++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A raw connection: `write` sends pieces (a pause between them, so each is its own read); `answers` reads n whole responses. */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buf = '';
  let closed = false;
  const wake: (() => void)[] = [];
  socket.on('data', (c: Buffer) => {
    buf += c.toString('latin1');
    wake.splice(0).forEach((w) => w());
  });
  socket.on('close', () => {
    closed = true;
    wake.splice(0).forEach((w) => w());
  });
  socket.on('error', () => {});
  return {
    async write(...pieces: string[]) {
      if (socket.connecting) await new Promise((r) => socket.once('connect', r));
      for (const [i, p] of pieces.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 60));
        socket.write(p);
      }
    },
    async answer(): Promise<{ head: string; status: number; headers: Record<string, string>; body: string }> {
      for (;;) {
        const whole = takeAnswer(buf);
        if (whole) {
          buf = whole.rest;
          const [line, ...fields] = whole.head.split('\r\n');
          const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
          return { head: line!, status: Number(line!.split(' ')[1]), headers, body: whole.body };
        }
        if (closed) throw new Error(`closed before a whole answer; got ${JSON.stringify(buf)}`);
        await new Promise<void>((r) => wake.push(r));
      }
    },
    closed: () => new Promise<void>((r) => (closed ? r() : socket.once('close', () => r()))),
    get isClosed() {
      return closed;
    },
    socket,
  };
}

const post = (path: string, extra = '', body = '{"buy":true}') =>
  `POST ${path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

describe('the known-answer door', () => {
  it('answers a first request with a known answer before node reads it, exactly as node answers it (Date aside)', async () => {
    const port = await start();
    const known0 = seen.known;
    const door = connect(port);
    await door.write(post('/api/sale/1'));
    const a = await door.answer();
    expect(parsedByNode).toBe(0); // node never parsed it
    expect(seen.known - known0).toBe(1); // asked once
    // The same request in two reads is node's (the door takes only a whole request in the first read).
    const viaNode = connect(port);
    await viaNode.write(post('/api/sale/1').slice(0, 20), post('/api/sale/1').slice(20));
    const b = await viaNode.answer();
    expect(parsedByNode).toBe(1);
    delete a.headers.date;
    delete b.headers.date;
    expect(a).toEqual(b);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ data: { state: 'soldout' } });
    expect(a.headers['x-content-type-options']).toBe('nosniff'); // the API's security headers
    expect(a.headers.connection).toBe('keep-alive');
    expect(observed).toEqual([
      ['sale', 200],
      ['sale', 200],
    ]);
    door.socket.destroy();
    viaNode.socket.destroy();
  });

  it('is the same with the door off: one answer whichever door (A/B switch HOT_KNOWN_DOOR)', async () => {
    const on = connect(await start());
    await on.write(post('/api/sale/1'));
    const a = await on.answer();
    const off = connect(await start({ knownDoor: false }));
    await off.write(post('/api/sale/1'));
    const b = await off.answer();
    expect(parsedByNode).toBe(1);
    delete a.headers.date;
    delete b.headers.date;
    expect(a).toEqual(b);
    on.socket.destroy();
    off.socket.destroy();
  });

  it('a kept-alive connection goes on through node: its next requests, known or not, are answered in order', async () => {
    const port = await start();
    const c = connect(port);
    await c.write(post('/api/sale/1'));
    expect((await c.answer()).status).toBe(200);
    expect(parsedByNode).toBe(0);
    await c.write(post('/api/sale/2', '', '"hello"'));
    expect(JSON.parse((await c.answer()).body)).toEqual({ data: { id: '2', body: '"hello"' } });
    await c.write(post('/api/sale/1') + post('/api/sale/3', '', '"x"'));
    expect(JSON.parse((await c.answer()).body)).toEqual({ data: { state: 'soldout' } });
    expect(JSON.parse((await c.answer()).body)).toEqual({ data: { id: '3', body: '"x"' } });
    expect(parsedByNode).toBe(3);
    expect(c.isClosed).toBe(false);
    c.socket.destroy();
  });

  it('Connection: close is answered with Connection: close and the server closes the connection', async () => {
    const c = connect(await start());
    await c.write(post('/api/sale/1', 'Connection: close\r\n'));
    const a = await c.answer();
    expect(a.headers.connection).toBe('close');
    await c.closed();
    expect(parsedByNode).toBe(0);
  });

  it('the peer header a known answer reads is the socket address, never the one the client sent', async () => {
    const c = connect(await start());
    await c.write(post('/api/sale/1', 'x-hmdp-peer: 6.6.6.6\r\n'));
    await c.answer();
    expect(parsedByNode).toBe(0);
    expect(seen.peer).toBe('127.0.0.1');
    c.socket.destroy();
  });

  it('anything odd is node:http\'s, read as node reads it: the door never answers a request it does not wholly understand', async () => {
    const port = await start();
    const cases: [string, string][] = [
      ['a header named twice', post('/api/sale/1', 'content-type: text/plain\r\n')],
      ['chunked', 'POST /api/sale/1 HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n'],
      ['length and chunked (smuggling)', 'POST /api/sale/1 HTTP/1.1\r\nhost: t\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n'],
      ['a folded header', post('/api/sale/1', 'x-a: 1\r\n  2\r\n')],
      ['a space before the colon', post('/api/sale/1', 'x-a : 1\r\n')],
      ['a bare LF', 'POST /api/sale/1 HTTP/1.1\nhost: t\r\ncontent-length: 0\r\n\r\n'],
      ['no host', 'POST /api/sale/1 HTTP/1.1\r\ncontent-length: 0\r\n\r\n'],
      ['HTTP/1.0', 'POST /api/sale/1 HTTP/1.0\r\nhost: t\r\ncontent-length: 0\r\n\r\n'],
      ['a body short of its length', 'POST /api/sale/1 HTTP/1.1\r\nhost: t\r\ncontent-length: 10\r\n\r\nabc'],
      ['two requests in one read', post('/api/sale/1') + post('/api/sale/1')],
      ['an upgrade', post('/api/sale/1', 'connection: upgrade\r\nupgrade: websocket\r\n')],
      ['a byte past ASCII', post('/api/sale/1', 'x-a: caf\xe9\r\n')],
      ['a lowercase method', 'post /api/sale/1 HTTP/1.1\r\nhost: t\r\ncontent-length: 0\r\n\r\n'],
    ];
    for (const [what, raw] of cases) {
      // What node answers to it alone (the door off), against what the door-on server answers.
      const offPort = await start({ knownDoor: false });
      const off = connect(offPort);
      await off.write(raw);
      const expected = await off.answer().catch((e: Error) => e.message);
      const parsedOff = parsedByNode;
      off.socket.destroy();
      const onPort = await start();
      const on = connect(onPort);
      await on.write(raw);
      const got = await on.answer().catch((e: Error) => e.message);
      on.socket.destroy();
      const strip = (x: typeof got) => (typeof x === 'string' ? x : { ...x, headers: { ...x.headers, date: '' } });
      expect(strip(got), what).toEqual(strip(expected));
      expect(parsedByNode, what).toBe(parsedOff); // node parsed exactly what it parses with the door off
    }
    void port;
  });

  it('a connection reset before its first byte, or after the door closed it, is no error of the process; the server goes on answering', async () => {
    const port = await start();
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    process.on('uncaughtException', onError);
    try {
      for (let i = 0; i < 20; i++) {
        const c = connect(port);
        await c.write();
        c.socket.resetAndDestroy(); // a TCP RST: the server's read fails with ECONNRESET
      }
      const closing = connect(port);
      await closing.write(post('/api/sale/1', 'Connection: close\r\n'));
      closing.socket.resetAndDestroy();
      await new Promise((r) => setTimeout(r, 300));
      const c = connect(port);
      await c.write(post('/api/sale/1'));
      expect((await c.answer()).status).toBe(200);
      c.socket.destroy();
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
  });

  it('a known answer that throws is answered by node\'s path (its error answer), not thrown out of the socket', async () => {
    const c = connect(await start());
    await c.write(post('/api/sale/9'));
    const a = await c.answer();
    expect(a.status).toBe(500);
    expect(parsedByNode).toBe(1);
    c.socket.destroy();
  });

  it('parseWhole takes one plain whole request only', () => {
    expect(parseWhole('GET /a?b=1 HTTP/1.1\r\nHost: t\r\nX-A:  v \r\n\r\n')).toEqual({ method: 'GET', url: '/a?b=1', headers: { host: 't', 'x-a': 'v' }, close: false });
    expect(parseWhole('GET /a HTTP/1.1\r\nHost: t\r\nConnection: keep-alive, close\r\n\r\n')?.close).toBe(true);
    expect(parseWhole('GET /a HTTP/1.1\r\nHost: t\r\ncontent-length: 1\r\n\r\nx')).toBeNull(); // a GET with a body
    expect(parseWhole('GET http://x/a HTTP/1.1\r\nHost: t\r\n\r\n')).toBeNull(); // absolute form
    expect(parseWhole('GET /a HTTP/1.1\r\nHost: t\r\n__proto__: x\r\n\r\n')?.headers.__proto__).toBe('x'); // a plain key
    expect(parseWhole('GET /a HTTP/1.1\r\nHost: t\r\ncontent-length: +1\r\n\r\n')).toBeNull();
    expect(parseWhole('GET /a HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n\r\n', 1)).toBeNull(); // node's maxHeadersCount, when lower
  });
});
