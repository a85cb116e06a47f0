/**
 * The split server's fallback (lib/hot/proxy.ts) against a plain node:http server on a unix socket
 * standing in for Next's process: the request goes on as it came (method, path, query, body, the
 * peer header) without the hop's own headers, the answer comes back as it streams (status, repeated
 * headers, a chunked body), Next not answering is a 502 JSON, and a client that leaves stops the
 * request upstream.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyToNext } from './proxy';

const dir = mkdtempSync(path.join(tmpdir(), 'proxy-test-'));
const socketPath = path.join(dir, 'next.sock');
let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
let upstreamClosed: Promise<void> = Promise.resolve();
let markClosed = () => {};

let earlySocketClosed: Promise<void> = Promise.resolve();
// requireHostHeader: false, as Next's own server (workers/next-server.ts): a request without Host is taken, and seen here as it arrives.
const next = http.createServer({ requireHostHeader: false }, (req, res) => {
  if (req.url === '/early') {
    // Answers on the headers alone, as a body refused by its declared length is.
    earlySocketClosed = new Promise<void>((r) => req.socket.once('close', () => r()));
    res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"too large"}');
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body });
    if (req.url === '/stream') {
      res.writeHead(201, { 'set-cookie': ['a=1; HttpOnly', 'b=2; HttpOnly'], 'x-kept': 'yes', 'content-type': 'text/plain' });
      res.write('first,');
      setTimeout(() => res.end('second'), 50);
    } else if (req.url === '/hang') {
      res.on('close', () => markClosed());
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('started');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }
  });
});

const front = http.createServer((req: IncomingMessage, res: ServerResponse) => void proxyToNext({ socketPath })(req, res));
const down = http.createServer((req, res) => void proxyToNext({ socketPath: path.join(dir, 'nobody.sock') })(req, res));
let origin = '';
let downOrigin = '';

beforeAll(async () => {
  await new Promise<void>((r) => next.listen(socketPath, r));
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => down.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  downOrigin = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
});

afterAll(async () => {
  front.closeAllConnections();
  next.closeAllConnections();
  await Promise.all([front, next, down].map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

/** A raw HTTP/1.1 request that closes its connection, so the test decides every header (fetch adds and forbids some). */
function raw(o: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const s = net.connect(Number(new URL(o).port), '127.0.0.1', () => s.write(text));
    s.on('data', (c: Buffer) => (got += c.toString()));
    s.on('end', () => resolve(got));
    s.on('error', reject);
  });
}

describe('the split server passes what is not a hot route to Next', () => {
  it('the request goes on as it came, without the hop\'s own headers', async () => {
    seen = [];
    const body = '{"x":1}';
    const answer = await raw(origin, `POST /api/notes?page=2 HTTP/1.1\r\nHost: shop.example\r\nConnection: close, x-hop\r\nX-Hop: secret\r\nKeep-Alive: timeout=5\r\nX-Hmdp-Peer: 203.0.113.9\r\nCookie: s=abc\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen).toHaveLength(1);
    const r = seen[0]!;
    expect(r).toMatchObject({ method: 'POST', url: '/api/notes?page=2', body });
    expect(r.headers).toMatchObject({ host: 'shop.example', 'x-hmdp-peer': '203.0.113.9', cookie: 's=abc', 'content-type': 'application/json' });
    expect(r.headers['keep-alive']).toBeUndefined();
    // What the Connection header names goes on: its list is ignored, so it cannot take away a
    // header Next relies on (x-forwarded-proto decides the cookies' Secure flag).
    expect(r.headers['x-hop']).toBe('secret');
  });

  it('a Connection header cannot take away x-forwarded-*, and a request without Host reaches Next without one', async () => {
    seen = [];
    await raw(origin, `GET /fwd HTTP/1.1\r\nHost: shop.example\r\nConnection: close, x-forwarded-proto, x-forwarded-for\r\nX-Forwarded-Proto: https\r\nX-Forwarded-For: 198.51.100.4\r\n\r\n`);
    const old = await raw(origin, 'GET /old HTTP/1.0\r\n\r\n');
    expect(old).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen.map((x) => x.url)).toEqual(['/fwd', '/old']);
    expect(seen[0]!.headers).toMatchObject({ 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.4' });
    expect(seen[1]!.headers.host).toBeUndefined();
  });

  it('a POST without a body reaches Next with length 0, not chunked; a GET without one with neither', async () => {
    seen = [];
    expect(await raw(origin, 'POST /empty HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await raw(origin, 'GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    expect(seen.map((x) => [x.url, x.headers['content-length'], x.headers['transfer-encoding']])).toEqual([
      ['/empty', '0', undefined],
      ['/plain', undefined, undefined],
    ]);
  });

  it('the request\'s headers reach Next before its body does', async () => {
    const arrived = new Promise<string | undefined>((r) => next.once('request', (req: IncomingMessage) => r(req.url)));
    const s = net.connect(Number(new URL(origin).port), '127.0.0.1');
    s.write('POST /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n');
    await expect(Promise.race([arrived, new Promise((r) => setTimeout(() => r('not yet'), 2000))])).resolves.toBe('/slow');
    const answered = new Promise<string>((r) => {
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      s.on('end', () => r(got));
    });
    s.write('{"a":12}');
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a body on a GET goes on framed: Next reads one request, never a second one hidden in it', async () => {
    seen = [];
    const hidden = 'GET /smuggled HTTP/1.1\r\nHost: x\r\nX-Hmdp-Peer: 6.6.6.6\r\n\r\n';
    const chunked = `${hidden.length.toString(16)}\r\n${hidden}\r\n0\r\n\r\n`;
    await raw(origin, `GET /page HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`);
    const withLength = await raw(origin, `GET /page2 HTTP/1.1\r\nHost: shop.example\r\nConnection: close, content-length, host, x-hmdp-peer\r\nX-Hmdp-Peer: 203.0.113.7\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}`);
    expect(withLength).toMatch(/^HTTP\/1\.1 200 /);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.map((x) => x.url)).toEqual(['/page', '/page2']);
    expect(seen.map((x) => x.body)).toEqual([hidden, hidden]);
    expect(seen[0]!.headers['transfer-encoding']).toBe('chunked');
    // A Connection header cannot take away the length, the host or the peer.
    expect(seen[1]!.headers).toMatchObject({ 'content-length': String(hidden.length), host: 'shop.example', 'x-hmdp-peer': '203.0.113.7' });
  });

  it('an answer before the body has gone on closes that upstream connection instead of leaving it mid-request', async () => {
    const s = net.connect(Number(new URL(origin).port), '127.0.0.1');
    let got = '';
    s.on('data', (c: Buffer) => (got += c.toString()));
    s.write('POST /early HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"a":');
    await expect(Promise.race([new Promise((r) => setTimeout(r, 50)).then(() => earlySocketClosed).then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 3000))])).resolves.toBe('closed');
    expect(got).toMatch(/^HTTP\/1\.1 413 /);
    s.destroy();
  });

  it('the answer comes back as it streams: status, every cookie, the body in pieces', async () => {
    const res = await fetch(`${origin}/stream`);
    expect(res.status).toBe(201);
    expect(res.headers.getSetCookie()).toEqual(['a=1; HttpOnly', 'b=2; HttpOnly']);
    expect(res.headers.get('x-kept')).toBe('yes');
    expect(await res.text()).toBe('first,second');
  });

  it('kept-alive requests after one another all arrive', async () => {
    seen = [];
    for (let i = 0; i < 5; i++) expect((await fetch(`${origin}/p${i}`)).status).toBe(200);
    expect(seen.map((s) => s.url)).toEqual(['/p0', '/p1', '/p2', '/p3', '/p4']);
  });

  it('Next not answering is a 502 JSON with Retry-After, never a hang', async () => {
    const res = await fetch(`${downOrigin}/login`);
    expect(res.status).toBe(502);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('BAD_GATEWAY');
  });

  it('a client that leaves mid-answer stops the request upstream', async () => {
    upstreamClosed = new Promise<void>((r) => (markClosed = r));
    const ac = new AbortController();
    const res = await fetch(`${origin}/hang`, { signal: ac.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('started');
    ac.abort();
    await expect(Promise.race([upstreamClosed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 3000))])).resolves.toBe('closed');
  });
});
