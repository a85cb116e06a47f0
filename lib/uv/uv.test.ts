/** UV by HyperLogLog: 10,000 distinct visitors (each seen several times) counted within its error; PV exact. */
import { afterAll, describe, expect, it } from 'vitest';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { recordShopView, shopTraffic } from '@/lib/uv/uv';

afterAll(async () => {
  await closeRedis();
});

describe('shop UV', () => {
  it('10,000 distinct visitors, 25,000 views: UV within 2 % (HLL standard error 0.81 %), PV exact, keys expire', async () => {
    const shopId = `5${Date.now()}`;
    const now = new Date('2026-06-15T03:00:00Z');
    const views = Array.from({ length: 25_000 }, (_, i) => `v:visitor-${i % 10_000}`);
    for (let i = 0; i < views.length; i += 2500) await Promise.all(views.slice(i, i + 2500).map((v) => recordShopView(redis, shopId, v, now)));
    const [today] = (await shopTraffic(redis, shopId, 1, now)).slice(-1);
    console.log(`[uv] 10000 distinct → PFCOUNT ${today!.uv} (${(((today!.uv - 10_000) / 10_000) * 100).toFixed(2)} %)`);
    expect(Math.abs(today!.uv - 10_000)).toBeLessThan(200);
    expect(today!.pv).toBe(25_000);
    expect(today!.date).toBe('2026-06-15');
    expect(await redis.ttl(keys.shopUv(shopId, '20260615'))).toBeGreaterThan(30 * 24 * 3600);
    const month = await shopTraffic(redis, shopId, 30, now);
    expect(month).toHaveLength(30);
    expect(month[0]!.date).toBe('2026-05-17');
    expect(month.slice(0, 29).every((d) => d.uv === 0 && d.pv === 0)).toBe(true);
    await redis.del(keys.shopUv(shopId, '20260615'), keys.shopPv(shopId, '20260615'));
  });
});
