/**
 * lib/cache: the generic cache-aside client (see cache-client.ts for the strategies). Services
 * get the client for whichever Redis they were handed, so tests can point one at a throwaway
 * server and kill it.
 */
import type { RedisClient } from '@/lib/redis/types';
import { CacheClient } from '@/lib/cache/cache-client';

export { CacheClient, processFallback, type CacheClientOptions, type CacheSpec } from '@/lib/cache/cache-client';
export { Semaphore } from '@/lib/cache/semaphore';

const clients = new WeakMap<RedisClient, CacheClient>();

/** The process's cache client for this Redis connection (one per connection, created lazily). */
export function cacheFor(redis: RedisClient): CacheClient {
  let c = clients.get(redis);
  if (!c) clients.set(redis, (c = new CacheClient(redis)));
  return c;
}
