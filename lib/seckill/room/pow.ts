/**
 * The bot gate (docs/fair-sale.md#the-bot-gate): an altcha proof of work (altcha-lib, self-hosted)
 * the browser solves before it may have a grab token. A challenge is signed with a key derived
 * from AUTH_SECRET and carries the user and the sale in its salt's parameters, with an expiry; a
 * solution counts once: its challenge is remembered in Redis until that expiry.
 */
import { createChallenge, extractParams, verifySolution } from 'altcha-lib';
import type { Challenge } from 'altcha-lib/types';
import { z } from 'zod';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { powKey } from '@/lib/seckill/room/tokens';

/** How long a challenge may take to be solved and sent back. */
export const CHALLENGE_TTL_MS = 10 * 60_000;

export function newChallenge(voucherId: string, userId: string, cost: number, now = Date.now()): Promise<Challenge> {
  return createChallenge({ hmacKey: powKey(), maxnumber: cost, expires: new Date(now + CHALLENGE_TTL_MS), params: { v: voucherId, u: userId } });
}

const payloadSchema = z
  .object({
    algorithm: z.literal('SHA-256'),
    challenge: z.string().regex(/^[0-9a-f]{64}$/),
    number: z.number().int().nonnegative().max(100_000_000),
    salt: z.string().min(1).max(300),
    signature: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .passthrough();

/** The payload the widget submits (base64 of JSON), parsed; null when it is not one. */
function parsePayload(raw: string): z.infer<typeof payloadSchema> | null {
  if (raw.length > 2048) return null;
  try {
    const r = payloadSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64').toString('utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * True when `raw` solves a challenge this server made for this user and sale, not expired, and
 * not used before (this call uses it up). Everything but the one-time check runs without Redis.
 */
export async function spendSolution(redis: RedisClient, voucherId: string, userId: string, raw: string, now = Date.now()): Promise<boolean> {
  const p = parsePayload(raw);
  if (!p) return false;
  const params = extractParams(p);
  const expires = Number(params.expires) * 1000;
  if (params.v !== voucherId || params.u !== userId || !(expires > now)) return false;
  if (!(await verifySolution(p, powKey(), true))) return false;
  const fresh = await redis.set(keys.roomPowSpent(voucherId, p.challenge), '1', 'PX', Math.max(1, expires - now), 'NX');
  return fresh === 'OK';
}
