/**
 * Redis sessions: `login:session:{token}` holds the user DTO for 30 minutes and
 * every authenticated request slides the TTL. The token is the only thing a client ever holds,
 * as a Bearer header (API clients) or inside the next-auth JWT cookie (browsers).
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import type { Role } from '@/lib/db/schema';
import { notifySessionsChanged, sessionCacheOf } from '@/lib/auth/session-cache';
import type { MaybePromise } from '@/lib/maybe-promise';

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

/**
 * A new session token: 32 bytes in base64url, the first 6 of them the time it was made (ms, big
 * endian), the other 26 random (208 bits). The time lets pruning (below) leave alone a token
 * another login is still writing.
 */
export function newSessionToken(now = Date.now()): string {
  const bytes = randomBytes(32);
  bytes.writeUIntBE(now, 0, 6);
  return bytes.toString('base64url');
}

/** When a token was made (ms), as its first 6 bytes say; a token from before they did reads as a random time. */
export function tokenMadeAt(token: string): number {
  return Buffer.from(token, 'base64url').readUIntBE(0, 6);
}

/** A token younger than this is never pruned: its login may not have written its session yet. */
const PRUNE_GRACE_MS = 60_000;

export async function createSession(redis: RedisClient, user: SessionUser): Promise<string> {
  const token = newSessionToken();
  const ttl = env.SESSION_TTL_SECONDS;
  // Two slots (the session's, the user's index): index first, so a token that exists is always
  // revocable; a crash between the two leaves only a dead token in the index, which pruning drops.
  await redis.multi().sadd(keys.userSessions(user.id), token).expire(keys.userSessions(user.id), INDEX_TTL_SECONDS).exec();
  await redis.multi().hset(keys.session(token), { id: user.id, nickName: user.nickName, icon: user.icon, role: user.role }).expire(keys.session(token), ttl).exec();
  // Bookkeeping and the cap: a failure only leaves dead tokens (or one session too many) for the next login.
  await pruneSessionIndex(redis, user.id).catch(() => 0);
  return token;
}

/** The per-user token index outlives any session by this much (a week without a login drops it). */
const INDEX_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Drops tokens whose session expired from the user's index, so it does not grow with every login,
 * and revokes the oldest live sessions past `max` (SESSION_MAX_PER_USER), so a user holds at most
 * that many. Runs at login (rare, off every hot path); one EXISTS per token, each its own slot.
 *
 * A token made in the last minute (by its own time, either side of this clock) is kept even without
 * a session: another login of the same user may be between its two writes (index, then session),
 * and dropping its token then left a live session that no revocation (a role change, log out
 * everywhere) could find. For the same reason the cap revokes only tokens whose session exists; a
 * young one still being written counts toward the cap and is revoked by the next login if it is
 * among the oldest. Tokens rank by the time they carry: ranked past `max` among the tokens one
 * login sees, a token is past `max` among all of them, so concurrent logins never revoke one of
 * the newest, and once they are done (the last to read the index sees every token, every session
 * written) exactly the newest `max` are live. Tokens from before they carried a time read as a
 * random time, almost never this minute; one that reads as later than now is ranked oldest.
 */
export async function pruneSessionIndex(redis: RedisClient, userId: string, now = Date.now(), max = env.SESSION_MAX_PER_USER): Promise<number> {
  const tokens = await redis.smembers(keys.userSessions(userId));
  const alive = await Promise.all(tokens.map((t) => redis.exists(keys.session(t))));
  const young = (t: string) => Math.abs(now - tokenMadeAt(t)) <= PRUNE_GRACE_MS;
  const dead = tokens.filter((t, i) => alive[i] === 0 && !young(t));
  if (dead.length > 0) await redis.srem(keys.userSessions(userId), ...dead);
  const held = tokens.filter((t, i) => alive[i] === 1 || young(t));
  if (held.length <= max) return dead.length;
  const live = new Set(tokens.filter((_, i) => alive[i] === 1));
  const over = held.sort(newestFirst(now)).slice(max).filter((t) => live.has(t));
  await Promise.all(over.map((t) => revokeSession(redis, t)));
  return dead.length + over.length;
}

/** Newest first by the time a token carries (a time past now + a minute: from before tokens carried one, oldest); ties by the token. */
export function newestFirst(now = Date.now()): (a: string, b: string) => number {
  const at = (t: string) => {
    const made = tokenMadeAt(t);
    return made > now + PRUNE_GRACE_MS ? 0 : made;
  };
  return (a, b) => at(b) - at(a) || (a < b ? 1 : a > b ? -1 : 0);
}

/**
 * The per-request session check: from this process's session cache when it holds the token (no
 * Redis, no promise; lib/auth/session-cache.ts), else touchSession, whose answer is cached.
 */
export function checkSession(redis: RedisClient, token: string): MaybePromise<SessionUser | null> {
  if (!isWellFormedToken(token)) return null;
  const cache = sessionCacheOf(redis);
  const hit = cache?.get(token);
  if (hit) return hit;
  const mark = cache?.mark() ?? 0;
  return touchSession(redis, token).then((user) => {
    if (user && cache) cache.set(token, user, mark);
    return user;
  });
}

/** Reads a session and slides its TTL in one round trip; null when missing, expired or revoked. */
export async function touchSession(redis: RedisClient, token: string): Promise<SessionUser | null> {
  if (!isWellFormedToken(token)) return null;
  const flat = await runScript<string[]>(redis, 'session-touch', [keys.session(token)], [env.SESSION_TTL_SECONDS]);
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  if (!hash.id) return null;
  const role = hash.role === 'merchant' || hash.role === 'admin' ? hash.role : 'user';
  return { id: hash.id, nickName: hash.nickName ?? '', icon: hash.icon ?? '', role };
}

export async function revokeSession(redis: RedisClient, token: string): Promise<void> {
  if (!isWellFormedToken(token)) return;
  const id = await redis.hget(keys.session(token), 'id');
  await redis.del(keys.session(token));
  if (id) await redis.srem(keys.userSessions(id), token);
  await notifySessionsChanged(redis, `t:${token}`);
}

/**
 * Revokes the sessions of a user that carry a role other than `role` (a role change). Decided by
 * each session's own role rather than by whether MySQL changed: a change committed in MySQL whose
 * revocation then met Redis down is retried as a no-op in MySQL, and the retry must still end the
 * sessions of the old role. Sessions already of the new role (a login after the change) stay.
 */
export async function revokeSessionsNotOfRole(redis: RedisClient, userId: string, role: Role): Promise<number> {
  const tokens = await redis.smembers(keys.userSessions(userId));
  const held = await Promise.all(tokens.map((t) => redis.hmget(keys.session(t), 'id', 'role')));
  // A session without a role field reads as 'user' (touchSession).
  const stale = tokens.filter((_, i) => held[i]![0] !== null && (held[i]![1] ?? 'user') !== role);
  await Promise.all(stale.map((t) => revokeSession(redis, t)));
  return stale.length;
}

/** Revokes every session of a user (role change, "log out everywhere"). One key per command: Cluster-safe. */
export async function revokeUserSessions(redis: RedisClient, userId: string): Promise<number> {
  const tokens = await redis.smembers(keys.userSessions(userId));
  await Promise.all(tokens.map((t) => redis.del(keys.session(t))));
  await redis.del(keys.userSessions(userId));
  await notifySessionsChanged(redis, `u:${userId}`);
  return tokens.length;
}
