/**
 * What closeRedis (lib/redis/client.ts) must close first: a module that keeps state per Redis
 * client (a subscriber duplicated from it, say) registers its own hook here when it is loaded, so
 * the Redis layer needs to know no module above it. Process-wide (globalThis), like the client.
 */
import type { RedisClient } from '@/lib/redis/types';

type CloseHook = (client: RedisClient) => Promise<void>;
const g = globalThis as unknown as { __hmdpRedisCloseHooks?: Set<CloseHook> };
const hooks = (g.__hmdpRedisCloseHooks ??= new Set());

export function onRedisClose(hook: CloseHook): void {
  hooks.add(hook);
}

export async function runRedisCloseHooks(client: RedisClient): Promise<void> {
  await Promise.all([...hooks].map((h) => h(client)));
}
