/**
 * The hot server's connections over raw TCP: keep-alive without node's per-request timer
 * (lib/hot/idle-sockets.ts) and body-less hot requests that node does not dump
 * (readBody in lib/hot/node-adapter.ts). Real sockets, real time.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createHotServer, MAX_PIPELINED } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { route } from '@/lib/http/route';
import { closeRedis } from '@/lib/redis/client';
import { takeAnswer } from '@/e2e/support/raw-http';

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) s.close();
  await closeRedis();
});

const echo = route({ auth: 'none' }, async ({ req }) => ({ method: req.method, body: req.method === 'POST' ? await req.text() : null }));
/** A route that knows its answer while `soldOut` is set (as the room's 已抢光), else echoes the body. */
const sale = { soldOut: false, handled: 0, known: 0 };
/** Counts each known answer it gives, as the grab's remembered refusals count themselves: asked once per request. */
const knownAnswer = () => (sale.soldOut ? (sale.known++, 'sold out') : undefined);
const knowing = route({ auth: 'none', known: knownAnswer }, async ({ req }) => {
  sale.handled++;
  return { body: await req.text() };
});

/** Requests the last started server took from its sockets ('request' events). */
let taken = 0;

async function start(keepAliveMs: number, slowMs = 0): Promise<number> {
  taken = 0;
  const server = createHotServer({
    routes: [
      { name: 'echo', method: 'POST', path: '/api/echo', handler: echo },
      { name: 'echo-get', method: 'GET', path: '/api/echo', handler: echo },
      { name: 'knowing', method: 'POST', path: '/api/knowing', handler: knowing },
    ],
    maxInFlight: 100,
    keepAliveMs,
    fallback: (_req, res) => {
      setTimeout(() => writeReply(res, { status: 200, body: { data: 'slow' } }), slowMs);
    },
  });
  servers.push(server);
  server.on('request', () => taken++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  expect(server.keepAliveTimeout).toBe(0); // node's own per-request timer is off
  return (server.address() as AddressInfo).port;
}

/** One raw keep-alive connection: send bytes, read whole responses (they carry content-length). */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buf = '';
  const waiters: (() => void)[] = [];
  let closedAt: number | null = null;
  socket.on('data', (c: Buffer) => {
    buf += c.toString();
    waiters.splice(0).forEach((w) => w());
  });
  socket.on('close', () => {
    closedAt = Date.now();
    waiters.splice(0).forEach((w) => w());
  });
  const response = async (): Promise<{ status: number; body: string }> => {
    for (;;) {
      const whole = takeAnswer(buf);
      if (whole) {
        buf = whole.rest;
        return { status: Number(whole.head.split(' ')[1]), body: whole.body };
      }
      if (closedAt !== null) throw new Error('connection closed before a whole response');
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return {
    socket,
    send: (raw: string) => socket.write(raw),
    response,
    closed: () => (closedAt === null ? new Promise<number>((r) => socket.once('close', () => r(Date.now()))) : Promise.resolve(closedAt)),
    get isClosed() {
      return closedAt !== null;
    },
  };
}

const req = (method: string, body?: string) =>
  `${method} /api/echo HTTP/1.1\r\nhost: t\r\n${body === undefined ? (method === 'POST' ? 'content-length: 0\r\n' : '') : `content-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`}\r\n${body ?? ''}`;

describe('hot server connections', () => {
  it('body-less and bodied hot requests, pipelined and one by one, all answered in order on one connection', async () => {
    const c = connect(await start(5000));
    // 200 requests back to back, mixing no body, an empty POST and a body, without waiting.
    const sent: { method: string; body: string | null }[] = [];
    let raw = '';
    for (let i = 0; i < 200; i++) {
      const [method, body] = [['GET', undefined], ['POST', undefined], ['POST', `b${i}`]][i % 3]!;
      raw += req(method!, body);
      sent.push({ method: method!, body: method === 'GET' ? null : (body ?? '') });
    }
    c.send(raw);
    for (const s of sent) {
      const r = await c.response();
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ data: s });
    }
    // And one by one.
    for (let i = 0; i < 20; i++) {
      c.send(req(i % 2 ? 'GET' : 'POST'));
      expect((await c.response()).status).toBe(200);
    }
    expect(c.isClosed).toBe(false);
    c.socket.destroy();
  });

  it('a client pipelining without reading its answers is closed: the server holds at most a read of its requests, and others are answered meanwhile', async () => {
    const port = await start(5000);
    const heapBefore = process.memoryUsage().heapUsed;
    // The attacker: 3 s of GETs back to back on one connection, never reading an answer. Before the
    // cap the server parsed and kept every one (hundreds of thousands, GBs of heap in seconds).
    const flood = connect(port);
    flood.socket.pause();
    flood.socket.on('error', () => {}); // the reset is the expected end
    const burst = req('GET').repeat(1000);
    let sent = 0;
    const honest: number[] = [];
    const until = Date.now() + 3000;
    let nextProbe = Date.now();
    while (Date.now() < until && !flood.isClosed) {
      if (Date.now() >= nextProbe) {
        nextProbe += 100;
        const from = Date.now();
        const c = connect(port);
        c.send(req('GET'));
        void c.response().then((r) => {
          honest.push(r.status === 200 ? Date.now() - from : Infinity);
          c.socket.destroy();
        });
      }
      flood.socket.write(burst);
      sent += 1000;
      if (flood.socket.writableLength > 1e6) await new Promise((r) => setTimeout(r, 2));
      await new Promise((r) => setImmediate(r));
    }
    expect(flood.isClosed).toBe(true);
    // What the server took: the requests allowed to wait, plus those of the read that crossed the limit.
    expect(taken).toBeLessThan(MAX_PIPELINED + 5000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200e6);
    await new Promise((r) => setTimeout(r, 300));
    expect(honest.length).toBeGreaterThan(0);
    expect(Math.max(...honest)).toBeLessThan(500);
    expect(sent).toBeGreaterThan(MAX_PIPELINED);
  });

  it('a known answer to a POST is given without its body; the connection goes on, or closes if the body is not all there', async () => {
    const port = await start(5000);
    const post = (body: string, length = Buffer.byteLength(body)) => `POST /api/knowing HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n${body}`;
    const c = connect(port);
    // Known: bodies never read (the handler never runs), and the requests behind them on the same
    // connection, pipelined with them, are all answered in order.
    sale.soldOut = true;
    c.send(post('{"buy":true}') + req('POST', 'after-1') + post('x'.repeat(5000)) + req('GET'));
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ data: 'sold out' }) });
    expect(JSON.parse((await c.response()).body)).toEqual({ data: { method: 'POST', body: 'after-1' } });
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ data: 'sold out' }) });
    expect(JSON.parse((await c.response()).body)).toEqual({ data: { method: 'GET', body: null } });
    // A chunked body, dropped by the parser chunk by chunk (dropBody): the request behind it is still framed.
    c.send('POST /api/knowing HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n' + req('POST', 'after-2'));
    expect(await c.response()).toEqual({ status: 200, body: JSON.stringify({ data: 'sold out' }) });
    expect(JSON.parse((await c.response()).body)).toEqual({ data: { method: 'POST', body: 'after-2' } });
    expect(sale.handled).toBe(0);
    expect(sale.known).toBe(3); // once per known answer, not once by the door and again by the route
    // Not known: the body is read and handled as before.
    sale.soldOut = false;
    c.send(post('{"n":1}'));
    expect(JSON.parse((await c.response()).body)).toEqual({ data: { body: '{"n":1}' } });
    expect(sale.handled).toBe(1);
    expect(c.isClosed).toBe(false);
    c.socket.destroy();
    // A body announced but not all sent: answered at once, and the connection closes (it could not
    // carry another request behind a body that may never come).
    sale.soldOut = true;
    const slow = connect(port);
    slow.send(post('{"bu', 100));
    expect((await slow.response()).status).toBe(200);
    await slow.closed();
    sale.soldOut = false;
  });

  it('an idle keep-alive connection is closed between the idle time and two sweeps later; a busy one is not', async () => {
    const port = await start(1200);
    const idle = connect(port);
    const busy = connect(port);
    const silent = connect(port); // connects and never sends a request
    await new Promise<void>((r) => silent.socket.once('connect', () => r()));
    const silentFrom = Date.now();
    idle.send(req('GET'));
    expect((await idle.response()).status).toBe(200);
    const idleFrom = Date.now();
    // The busy one sends a request every 300 ms for 3 s: never idle for 1.2 s.
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      busy.send(req('POST'));
      expect((await busy.response()).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(busy.isClosed).toBe(false);
    const idleFor = (await idle.closed()) - idleFrom;
    const silentFor = (await silent.closed()) - silentFrom;
    expect(idleFor).toBeGreaterThanOrEqual(1200 - 20); // timers may fire a hair early
    expect(idleFor).toBeLessThan(1200 + 2000 + 300);
    expect(silentFor).toBeGreaterThanOrEqual(1200 - 20);
    expect(silentFor).toBeLessThan(1200 + 2000 + 300);
    busy.socket.destroy();
  });

  it('a response in progress for longer than the idle time is not cut off', async () => {
    const c = connect(await start(800, 2500));
    c.send('GET /slow HTTP/1.1\r\nhost: t\r\n\r\n');
    const r = await c.response();
    expect([r.status, JSON.parse(r.body)]).toEqual([200, { data: 'slow' }]);
    // Then it is idle like any other.
    const from = Date.now();
    expect((await c.closed()) - from).toBeLessThan(800 + 2000 + 300);
  });
});
