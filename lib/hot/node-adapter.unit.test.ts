/**
 * The lazy hot Request (toHotRequest) reads exactly like the web Request the adapter used to build
 * for every request (toWebRequest): same method, URL, headers (one by one and iterated), body, and
 * and the same writes. Real node:http requests, captured on a real socket.
 */
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { readBody, toHotRequest, toWebRequest } from '@/lib/hot/node-adapter';

const captured: ((req: IncomingMessage, body: Buffer | null) => void)[] = [];
const server = http.createServer(async (req, res) => {
  const pending = readBody(req, res);
  const body = pending && (await pending);
  captured.shift()?.(req, body);
  res.end();
});

afterAll(() => server.close());

async function capture(init: RequestInit & { path?: string }): Promise<{ hot: Request; web: Request }> {
  if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const got = new Promise<{ hot: Request; web: Request }>((resolve) => captured.push((req, body) => resolve({ hot: toHotRequest(req, body), web: toWebRequest(req, body) })));
  await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${init.path ?? '/api/seckill/7?x=1'}`, init);
  return got;
}

describe('toHotRequest', () => {
  it('answers method, URL and headers like the full web Request, without a body', async () => {
    const { hot, web } = await capture({ method: 'POST', headers: { Authorization: 'Bearer abc', 'X-Forwarded-For': '1.2.3.4', Cookie: 'a=1' } });
    expect(hot.method).toBe(web.method);
    expect(hot.url).toBe(web.url);
    for (const name of ['authorization', 'Authorization', 'x-forwarded-for', 'cookie', 'host', 'origin', 'content-type']) {
      expect(hot.headers.get(name), name).toBe(web.headers.get(name));
      expect(hot.headers.has(name), name).toBe(web.headers.has(name));
    }
    expect([...hot.headers]).toEqual([...web.headers]);
    expect(hot.body).toBeNull();
    expect(await hot.text()).toBe('');
    // Writable like a web Request's headers: the write copies them first.
    for (const r of [hot, web]) {
      r.headers.set('x-added', '1');
      r.headers.delete('cookie');
    }
    expect([...hot.headers]).toEqual([...web.headers]);
    expect(hot.headers.get('x-added')).toBe('1');
  });

  it('builds the full Request for anything past method, URL and headers: the body, clone(), signal', async () => {
    const { hot } = await capture({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 1 }) });
    expect(hot.body).not.toBeNull();
    expect(hot.signal.aborted).toBe(false);
    expect(await hot.clone().json()).toEqual({ a: 1 });
    expect(await hot.json()).toEqual({ a: 1 });
    expect(hot.bodyUsed).toBe(true);
  });
});
