/**
 * A known answer (RouteOptions.known) shared by a crowd: one reply object per known object, frozen,
 * and serialized once by the hot server (lib/hot/node-adapter.ts writeReply); an answer that is not
 * shared is built and serialized per request, so a changed body is never sent stale. Real node:http.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { route } from '@/lib/http/route';
import { AppError } from '@/lib/errors';
import { writeReply } from '@/lib/hot/node-adapter';
import type { Reply } from '@/lib/http/respond';

let known: object | undefined;
const handler = route({ auth: 'none', known: () => known }, async () => ({ handled: true }));
const req = () => new Request('http://hot.local/api/x', { method: 'POST' });

describe('a known answer', () => {
  it('is one frozen reply per known object, a new one for a new object', () => {
    known = Object.freeze({ state: 'soldout', served: 10 });
    const a = handler.core(req(), {}) as Reply;
    const b = handler.core(req(), {}) as Reply;
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a.body).toEqual({ data: { state: 'soldout', served: 10 } });
    // The same object, https: the reply with HSTS, kept apart from the plain one.
    const https = handler.core(new Request('https://hot.local/api/x', { method: 'POST' }), {}) as Reply;
    expect(https).not.toBe(a);
    expect(https.headers?.['Strict-Transport-Security']).toBeDefined();
    expect(a.headers?.['Strict-Transport-Security']).toBeUndefined();
    known = Object.freeze({ state: 'soldout', served: 11 });
    const c = handler.core(req(), {}) as Reply;
    expect(c).not.toBe(a);
    expect(c.body).toEqual({ data: { state: 'soldout', served: 11 } });
  });

  it('that could change in place (not frozen) is answered afresh each time, never stale', () => {
    const changing = { state: 'waiting', served: 1 };
    known = changing;
    const a = handler.core(req(), {}) as Reply;
    changing.served = 2;
    const b = handler.core(req(), {}) as Reply;
    expect(b).not.toBe(a);
    expect(Object.isFrozen(a)).toBe(false);
    expect(b.body).toEqual({ data: { state: 'waiting', served: 2 } });
  });

  it('a shared refusal error is one frozen reply too', () => {
    const refusal = new AppError('SOLD_OUT', '已抢光');
    known = refusal;
    const a = handler.core(req(), {}) as Reply;
    expect(handler.core(req(), {})).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a.status).toBe(410);
  });
});

describe('writeReply', () => {
  const sent: string[] = [];
  let reply: Reply;
  const server = http.createServer((_req, res) => writeReply(res, reply));
  afterAll(() => server.close());
  const get = async () => {
    if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    sent.push(await r.text());
    return r;
  };

  it('serializes a frozen reply once and sends the same answer each time', async () => {
    reply = Object.freeze({ status: 200, body: { data: { n: 1 } }, headers: { 'X-A': 'a' } });
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      for (let i = 0; i < 3; i++) {
        const r = await get();
        expect(r.status).toBe(200);
        expect(r.headers.get('x-a')).toBe('a');
        expect(r.headers.get('content-type')).toBe('application/json');
      }
      expect(stringify.mock.calls.filter(([v]) => v === reply.body)).toHaveLength(1);
    } finally {
      stringify.mockRestore();
    }
    expect(sent.slice(-3)).toEqual(Array(3).fill('{"data":{"n":1}}'));
  });

  it('serializes a reply that is not frozen every time: a changed body is sent as it is now', async () => {
    const body = { data: { n: 1 } };
    reply = { status: 200, body };
    await get();
    body.data.n = 2;
    await get();
    expect(sent.slice(-2)).toEqual(['{"data":{"n":1}}', '{"data":{"n":2}}']);
  });
});
