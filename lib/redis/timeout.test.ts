/**
 * A cut link to Redis (a partition: the connection stays open, nothing comes back) fails a
 * command within REDIS_COMMAND_TIMEOUT_MS instead of stalling it for as long as the cut lasts.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.REDIS_COMMAND_TIMEOUT_MS = '1000'; // the product's default (the test setup raises it)
});
import { env } from '@/lib/env';
import { createRedis } from '@/lib/redis/client';
import { isCommandTimeout } from '@/lib/redis/timeout';
import { isDependencyDown } from '@/lib/http/respond';
import { TcpProxy } from '@/e2e/support/tcp-proxy';

const target = new URL(env.REDIS_URL);
const proxy = new TcpProxy(0, Number(target.port) || 6379, target.hostname);

afterAll(() => proxy.close());

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then((v) => ({ v }), (e: unknown) => ({ e })), new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), ms))]);

describe('Redis commands time out on a cut link', () => {
  it('a command on a silent connection fails in about REDIS_COMMAND_TIMEOUT_MS, and the answer is a 503', async () => {
    expect(env.REDIS_COMMAND_TIMEOUT_MS).toBe(1000);
    await proxy.start();
    const client = createRedis(`redis://127.0.0.1:${proxy.port}${target.pathname}`);
    try {
      expect(await client.ping()).toBe('PONG');
      proxy.freeze();
      const t0 = Date.now();
      const r = await within(client.ping(), 4000);
      expect(r).not.toBe('stalled');
      const err = (r as { e?: unknown }).e;
      expect(isCommandTimeout(err)).toBe(true);
      expect(isDependencyDown(err)).toBe(true);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
      expect(Date.now() - t0).toBeLessThan(2500);
      // The link heals: the same client answers again.
      proxy.thaw();
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});
