/**
 * Redis sessions (DESIGN §4, §6): `login:session:{token}` holds the user DTO for 30 minutes and
 * every authenticated request slides the TTL. The token is the only thing a client ever holds,
 * as a Bearer header (API clients) or inside the next-auth JWT cookie (browsers).
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import type { Role } from '@/lib/db/schema';

export interface SessionUser {
  id: string;
  nickName: string;
  icon: string;
  role: Role;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export function isWellFormedToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

export async function createSession(redis: RedisClient, user: SessionUser): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const ttl = env.SESSION_TTL_SECONDS;
  // Two slots (the session's, the user's index): index first, so a token that exists is always
  // revocable; a crash between the two leaves only a dead token in the index, which DEL ignores.
  await redis.multi().sadd(keys.userSessions(user.id), token).expire(keys.userSessions(user.id), 7 * 24 * 3600).exec();
  await redis
    .multi()
    .hset(keys.session(token), { id: user.id, nickName: user.nickName, icon: user.icon, role: user.role })
    .expire(keys.session(token), ttl)
    .exec();
  return token;
}

/** Reads a session and slides its TTL in one round trip; null when missing, expired or revoked. */
export async function touchSession(redis: RedisClient, token: string): Promise<SessionUser | null> {
  if (!isWellFormedToken(token)) return null;
  const key = keys.session(token);
  const res = await redis.multi().hgetall(key).expire(key, env.SESSION_TTL_SECONDS, 'XX').exec();
  const hash = res?.[0]?.[1] as Record<string, string> | undefined;
  if (!hash || !hash.id) return null;
  const role = hash.role === 'merchant' || hash.role === 'admin' ? hash.role : 'user';
  return { id: hash.id, nickName: hash.nickName ?? '', icon: hash.icon ?? '', role };
}

export async function revokeSession(redis: RedisClient, token: string): Promise<void> {
  if (!isWellFormedToken(token)) return;
  const id = await redis.hget(keys.session(token), 'id');
  await redis.del(keys.session(token));
  if (id) await redis.srem(keys.userSessions(id), token);
}

/** Revokes every session of a user (role change, "log out everywhere"). */
export async function revokeUserSessions(redis: RedisClient, userId: string): Promise<number> {
  const tokens = await redis.smembers(keys.userSessions(userId));
  if (tokens.length === 0) return 0;
  // Each session key lives in its own slot: one DEL per key (a cluster routes each to its node).
  await Promise.all(tokens.map((t) => redis.del(keys.session(t))));
  await redis.del(keys.userSessions(userId));
  return tokens.length;
}
