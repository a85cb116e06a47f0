/**
 * The session check without Redis on the hot path (docs/hot-server.md#session-cache), on by default
 * (SESSION_CACHE_MS 1000; 0 turns it off, as the test suites do). Without it every authenticated
 * request costs one Redis round trip (lua/session-touch-1.lua: read the session, slide its TTL),
 * and a refused grab cannot be answered without a promise (lib/maybe-promise.ts).
 * Each process remembers token → user for at most SESSION_CACHE_MS, for at most
 * SESSION_CACHE_MAX tokens (on a full cache expired entries go first, then everything), so the
 * touch — and with it the sliding TTL — runs at most once per period per token and process.
 *
 * Revocation: logout and a role change (revokeSession per token) and revokeUserSessions ("log out everywhere")
 * forget the token or user here at once and publish it on `login:sessions-changed`; every process
 * subscribes on a dedicated connection and forgets too. A revoked token is therefore refused
 * everywhere within the pub/sub latency, and never later than SESSION_CACHE_MS. While the
 * subscriber connection is down the cache is emptied and not used (every request asks Redis), and
 * an answer that left Redis before a revocation arrived is not cached (epoch check). The session
 * hash is only written at login; nothing else changes a cached user without revoking the session.
 */
import type { RedisClient } from '@/lib/redis/types';
import type { SessionUser } from '@/lib/auth/session';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import { subscribeTrusted, type Subscription } from '@/lib/redis/subscriber';
import { TrustedMemory } from '@/lib/redis/trusted-memory';
import { onRedisClose } from '@/lib/redis/close-hooks';

/** Token → user (lib/redis/trusted-memory.ts keeps it honest). */
export class SessionCache extends TrustedMemory<SessionUser> {
  /** `t:<token>` forgets one session, `u:<userId>` every session of that user; anything else, all. */
  forgetMessage(message: string): void {
    if (message.startsWith('t:')) this.forget(message.slice(2));
    else if (message.startsWith('u:')) {
      const id = message.slice(2);
      this.forget((user) => user.id === id);
    } else this.forgetAll();
  }
}

export interface SessionCacheHandle {
  cache: SessionCache;
  subscription: Subscription;
}

const handles = new WeakMap<RedisClient, SessionCacheHandle>();

/** This process's session cache for `client` (subscribed on first use), or null when SESSION_CACHE_MS is 0. */
export function sessionCacheOf(client: RedisClient): SessionCache | null {
  if (env.SESSION_CACHE_MS <= 0) return null;
  return openSessionCache(client).cache;
}

export function openSessionCache(client: RedisClient, boundMs = env.SESSION_CACHE_MS, maxEntries = env.SESSION_CACHE_MAX): SessionCacheHandle {
  const existing = handles.get(client);
  if (existing) return existing;
  const cache = new SessionCache(boundMs, maxEntries);
  const subscription = subscribeTrusted(
    client,
    'session cache',
    keys.sessionsChanged(),
    (m) => cache.forgetMessage(m),
    (trusted) => cache.setTrusted(trusted),
  );
  const handle = { cache, subscription };
  handles.set(client, handle);
  return handle;
}

export async function closeSessionCache(client: RedisClient): Promise<void> {
  const h = handles.get(client);
  if (!h) return;
  handles.delete(client);
  await h.subscription.close();
}
onRedisClose(closeSessionCache);

/** Forgets here at once, then tells every other process. Never throws: the revocation in Redis is done; caches expire within SESSION_CACHE_MS anyway. */
export async function notifySessionsChanged(client: RedisClient, message: `t:${string}` | `u:${string}`): Promise<void> {
  handles.get(client)?.cache.forgetMessage(message);
  try {
    await client.publish(keys.sessionsChanged(), message);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'session revocation notice failed; session caches expire on their own');
  }
}
