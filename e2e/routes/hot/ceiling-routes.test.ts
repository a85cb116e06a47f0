/**
 * Routes the adaptive limit never sheds (HotRoute.admission, lib/hot/server.ts): the waiting room's
 * own routes and a grab carrying a room's grab token are refused only above HOT_MAX_IN_FLIGHT. Real
 * sockets: with the limit full, an ordinary request is shed 503, a ceiling one is served.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { route } from '@/lib/http/route';
import { createHotServer } from '@/lib/hot/server';
import { writeReply } from '@/lib/hot/node-adapter';
import { AdmissionLimit } from '@/lib/hot/admission-limit';
import { hotRoutes } from '@/app/api/hot-routes';

let release: () => void = () => {};
const held = new Promise<void>((r) => (release = r));
// Holds its slot until released: the limit stays full while the other requests arrive.
const slow = route({ auth: 'none' }, async () => {
  await held;
  return { ok: true };
});
const quick = route({ auth: 'none' }, async () => ({ ok: true }));

const servers: http.Server[] = [];
afterAll(() => {
  release();
  for (const s of servers) s.close();
});

async function post(port: number, path: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST' });
  await r.arrayBuffer();
  return r.status;
}

describe('routes refused only above the ceiling', () => {
  it('with the adaptive limit full, an ordinary request is shed and a ceiling one (a room route, a grab with ?g=) is served', async () => {
    const admission = new AdmissionLimit({ max: 8, adaptive: true, min: 1, initial: 1 });
    const server = createHotServer({
      routes: [
        { name: 'slow', method: 'POST', path: '/api/slow', handler: slow },
        { name: 'plain', method: 'POST', path: '/api/plain', handler: quick },
        { name: 'room', method: 'POST', path: '/api/room', handler: quick, admission: 'ceiling' },
        { name: 'grab', method: 'POST', path: '/api/grab', handler: quick, admission: (url) => (url.includes('?g=') ? 'ceiling' : 'limit') },
      ],
      admission,
      fallback: (_req, res) => writeReply(res, { status: 404, body: {} }),
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const holding = post(port, '/api/slow');
    await expect.poll(() => admission.inFlight).toBe(1); // the limit (1) is full
    expect(await post(port, '/api/plain')).toBe(503);
    expect(await post(port, '/api/grab')).toBe(503);
    expect(await post(port, '/api/room')).toBe(200);
    expect(await post(port, '/api/grab?g=token')).toBe(200);
    release();
    expect(await holding).toBe(200);
    expect(await post(port, '/api/plain')).toBe(200);
  });

  it('the product marks the waiting room’s routes, and the grab only when it carries a grab token', () => {
    const mode = (method: string, path: string, url: string) => {
      const r = hotRoutes.find((h) => h.method === method && h.path === path)!;
      return typeof r.admission === 'function' ? r.admission(url) : (r.admission ?? 'limit');
    };
    expect(mode('POST', '/api/seckill/[voucherId]/room', '/api/seckill/1/room')).toBe('ceiling');
    expect(mode('GET', '/api/seckill/[voucherId]/room', '/api/seckill/1/room?wait=1000')).toBe('ceiling');
    expect(mode('GET', '/api/seckill/[voucherId]/room/challenge', '/api/seckill/1/room/challenge')).toBe('ceiling');
    expect(mode('POST', '/api/seckill/[voucherId]/room/token', '/api/seckill/1/room/token')).toBe('ceiling');
    expect(mode('POST', '/api/seckill/[voucherId]', '/api/seckill/1')).toBe('limit');
    expect(mode('POST', '/api/seckill/[voucherId]', '/api/seckill/1?g=g2.1.2.x')).toBe('ceiling');
    expect(mode('GET', '/api/orders/[id]', '/api/orders/1')).toBe('limit');
  });
});
