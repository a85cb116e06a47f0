/**
 * A dedicated pub/sub connection. SUBSCRIBE puts a connection in subscriber mode, so a process
 * listens on its own `duplicate()` of a command client (a plain node or a Cluster: ioredis routes a
 * Cluster's subscriptions to one node, and Redis Cluster broadcasts PUBLISH to every node). Used by
 * the lock's release notifications (lib/lock/release-bus.ts) and the grab's refusal memory
 * (lib/seckill/refusal-memory.ts) and the session cache (lib/auth/session-cache.ts).
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';

export function openSubscriber(client: RedisClient, what: string, onMessage: (channel: string, message: string) => void): RedisClient {
  const sub = client.duplicate();
  sub.on('error', (err: Error) => log.warn({ err: err.message }, `${what} subscriber connection error`));
  sub.on('message', onMessage);
  return sub;
}

export interface Subscription {
  subscriber: RedisClient;
  close(): Promise<void>;
}

/**
 * One channel on its own subscriber connection, for a local memory that pub/sub keeps honest:
 * `onTrust(true)` once SUBSCRIBE is confirmed, `onTrust(false)` as soon as the connection drops
 * (messages published meanwhile are lost, so whatever was remembered cannot be trusted) or, on a
 * Cluster, a node leaves; after a reconnect, `onTrust(true)` again once our SUBSCRIBE is confirmed.
 */
export function subscribeTrusted(
  client: RedisClient,
  what: string,
  channel: string,
  onMessage: (message: string) => void,
  onTrust: (trusted: boolean) => void,
): Subscription {
  let closed = false;
  let trusted = false;
  // One SUBSCRIBE per connection: the first one, sent while connecting, goes out on 'ready' too,
  // and a second one from the 'ready' handler made every memory start twice (each start forgets
  // everything, so a refusal learned between the two confirmations was dropped).
  let inFlight = false;
  const subscriber = openSubscriber(client, what, (ch, message) => {
    if (ch === channel) onMessage(message);
  });
  const subscribe = () => {
    if (closed || inFlight) return;
    inFlight = true;
    subscriber.subscribe(channel).then(
      () => {
        inFlight = false;
        if (closed) return;
        trusted = true;
        onTrust(true);
      },
      (err: Error) => {
        inFlight = false;
        log.warn({ err: err.message, channel }, `${what}: subscribe failed; not using the local memory`);
      },
    );
  };
  const distrust = () => {
    if (trusted && !closed) log.warn({ channel }, `${what}: subscriber connection lost; not using the local memory until resubscribed`);
    trusted = false;
    inFlight = false; // the connection is gone: the next 'ready' subscribes (and confirms) anew
    onTrust(false);
  };
  subscriber.on('close', distrust);
  subscriber.on('end', distrust);
  subscriber.on('reconnecting', distrust);
  // A reconnected connection resubscribes itself; confirming our own SUBSCRIBE is what re-trusts.
  subscriber.on('ready', subscribe);
  if (subscriber instanceof Cluster) {
    subscriber.on('-node', () => {
      distrust();
      subscribe();
    });
  }
  subscribe();
  return {
    subscriber,
    async close() {
      closed = true;
      onTrust(false);
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}
