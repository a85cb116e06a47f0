/**
 * A dedicated pub/sub connection. SUBSCRIBE puts a connection in subscriber mode, so a process
 * listens on its own `duplicate()` of a command client (a plain node or a Cluster: ioredis routes a
 * Cluster's subscriptions to one node, and Redis Cluster broadcasts PUBLISH to every node). Used by
 * the lock's release notifications (lib/lock/release-bus.ts) and the grab's refusal memory
 * (lib/seckill/refusal-memory.ts).
 */
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';

export function openSubscriber(client: RedisClient, what: string, onMessage: (channel: string, message: string) => void): RedisClient {
  const sub = client.duplicate();
  sub.on('error', (err: Error) => log.warn({ err: err.message }, `${what} subscriber connection error`));
  sub.on('message', onMessage);
  return sub;
}
