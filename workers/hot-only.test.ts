/**
 * The hot-only server's fallback (WEB_PART=hot, shape (b)): Next is not there, so the health check
 * is answered by its own route handler and anything else gets a 404 JSON, never a hang or a 500.
 * Over real HTTP against the real services behind the health check.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { hotRoutes } from '@/app/api/hot-routes';
import { closeDb } from '@/lib/db/client';
import { hotOnlyFallback } from '@/workers/hot-only';
import { createHotServer } from '@/lib/hot/server';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis } from '@/lib/redis/client';

const server = createHotServer({ routes: hotRoutes, maxInFlight: 100, fallback: hotOnlyFallback });

afterAll(async () => {
  server.close();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

describe('hot-only server', () => {
  it('answers the health check, 404 JSON for pages and other APIs, and still serves the hot routes', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const health = await fetch(`${base}/api/health?probe=1`);
    expect(health.status).toBe(200);
    expect((await health.json()).data.ok).toBe(true);

    for (const path of ['/', '/shops/1', '/api/shops/1', '/api/health/x']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect((await res.json()).error.code).toBe('NOT_FOUND');
    }

    const grab = await fetch(`${base}/api/seckill/1`, { method: 'POST' });
    expect(grab.status).toBe(401);
  });
});
