/**
 * subscribeTrusted starts a memory once per connection: one trust on start and one after each
 * reconnect, never two (each start forgets everything, so a second one dropped what a caller had
 * just learned), and messages flow once trusted.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { env } from '@/lib/env';
import { closeRedis, redis } from '@/lib/redis/client';
import { subscribeTrusted } from '@/lib/redis/subscriber';
import { waitFor } from '@/e2e/support/fixtures/seckill';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(async () => {
  await closeRedis();
});

describe('subscribeTrusted', () => {
  it.skipIf(env.REDIS_CLUSTER_NODES.length > 0)('trusts once per connection, on start and after a reconnect, and delivers messages', async () => {
    const channel = `test:subscriber:${process.pid}:${Date.now()}`;
    const trust: boolean[] = [];
    const got: string[] = [];
    const sub = subscribeTrusted(redis, 'test', channel, (m) => got.push(m), (t) => trust.push(t));
    try {
      await waitFor('subscribed', async () => trust.includes(true), 5000, 5);
      await sleep(300); // a second confirmation, if any, has long arrived
      expect(trust.filter(Boolean)).toHaveLength(1);

      await redis.publish(channel, 'one');
      await waitFor('the message', async () => got.includes('one'), 5000, 5);

      (sub.subscriber as Redis).stream.destroy(); // the connection drops as on a network fault
      await waitFor('distrusted', async () => trust.at(-1) === false, 5000, 5);
      await waitFor('trusted again', async () => trust.at(-1) === true, 10_000, 10);
      await sleep(300);
      expect(trust.filter(Boolean)).toHaveLength(2);
      await redis.publish(channel, 'two');
      await waitFor('the message after the reconnect', async () => got.includes('two'), 5000, 5);
    } finally {
      await sub.close();
    }
  });
});
