import Redis, { type RedisOptions } from 'ioredis';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { defineScripts } from '@/lib/redis/scripts';

export type { Redis };

export function createRedis(url = env.REDIS_URL, options: RedisOptions = {}): Redis {
  const client = new Redis(url, {
    maxRetriesPerRequest: 2,
    connectTimeout: 3000,
    enableOfflineQueue: true,
    // Reconnect forever with a capped backoff; callers see fast errors meanwhile.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // Commands issued in one event-loop turn by concurrent requests go out as one write.
    enableAutoPipelining: env.REDIS_AUTO_PIPELINING,
    ...options,
  });
  client.on('error', (err) => log.warn({ err: err.message, url: redactUrl(url) }, 'redis connection error'));
  defineScripts(client);
  return client;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}

const g = globalThis as unknown as { __hmdpRedis?: Redis };
/** The process-wide connection for commands (not for SUBSCRIBE: use `redis.duplicate()`). */
export const redis: Redis = g.__hmdpRedis ?? (g.__hmdpRedis = createRedis());

export async function closeRedis(): Promise<void> {
  if (g.__hmdpRedis) {
    const r = g.__hmdpRedis;
    g.__hmdpRedis = undefined;
    // QUIT waits in the offline queue forever when the server is gone: give it a moment, then cut.
    await Promise.race([r.quit().catch(() => {}), new Promise((res) => setTimeout(res, 1000).unref())]);
    r.disconnect();
  }
}
