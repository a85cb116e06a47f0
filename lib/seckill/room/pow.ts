/**
 * The bot gate (docs/fair-sale.md#the-bot-gate): an altcha proof of work (altcha-lib, self-hosted)
 * the browser solves before it may have a grab token. A challenge is signed with a key derived
 * from AUTH_SECRET and carries the user and the sale in its salt's parameters, with an expiry; a
 * solution counts once: its challenge is remembered in Redis until that expiry.
 *
 * The challenge and its check are altcha's format (what the widget solves and submits), made and
 * checked here with node:crypto in a few microseconds. altcha-lib's own createChallenge and
 * verifySolution go through WebCrypto's async jobs: ~400 µs of the web process's time per
 * challenge, 0.4 s of a 20 000-user spike's (docs/fair-sale.md#the-bot-gate). pow.unit.test.ts
 * checks both ways that altcha-lib accepts what this makes and this accepts what altcha-lib makes.
 */
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Challenge } from 'altcha-lib/types';
import { z } from 'zod';
import { powKey } from '@/lib/seckill/room/tokens';

/** How long a challenge may take to be solved and sent back. */
export const CHALLENGE_TTL_MS = 10 * 60_000;

export function newChallenge(voucherId: string, userId: string, cost: number, now = Date.now()): Challenge {
  // The salt carries the user, the sale and the expiry (altcha's "salt?params&": the & ends the
  // parameters, so a solver cannot splice its own onto the number).
  const params = new URLSearchParams({ v: voucherId, u: userId, expires: String(Math.floor((now + CHALLENGE_TTL_MS) / 1000)) });
  const salt = `${randomBytes(12).toString('hex')}?${params.toString()}&`;
  const challenge = sha256Hex(salt + randomInt(0, cost + 1));
  return { algorithm: 'SHA-256', challenge, maxnumber: cost, salt, signature: signatureOf(challenge) };
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const signatureOf = (challenge: string) => createHmac('sha256', powKey()).update(challenge).digest('hex');

/** The parameters a challenge's salt carries (after its "?"). */
function paramsOf(salt: string): URLSearchParams {
  const q = salt.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : salt.slice(q + 1));
}

/** Both hex strings of 64 digits (the schema below), compared in constant time. */
const sameHex = (a: string, b: string) => timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

const payloadSchema = z
  .object({
    algorithm: z.literal('SHA-256'),
    challenge: z.string().regex(/^[0-9a-f]{64}$/),
    number: z.number().int().nonnegative().max(100_000_000),
    salt: z.string().min(1).max(300),
    signature: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .passthrough();

type Payload = z.infer<typeof payloadSchema>;

/** The payload the widget submits (base64 of JSON), parsed; null when it is not one. */
export function parsePayload(raw: string): Payload | null {
  if (raw.length > 2048) return null;
  try {
    const r = payloadSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64').toString('utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * When `raw` solves a challenge this server made for this user and sale, not expired: the
 * challenge (its spent mark's name) and how long the mark must live (until the challenge's
 * expiry); null otherwise. Without Redis: whether it was spent before is the one-time check of
 * lua/seckill-gate-pass-2.lua (lib/seckill/room/grab-token.ts: passGate), in the gate's one round trip.
 */
export function checkSolution(raw: string, voucherId: string, userId: string, now = Date.now()): { challenge: string; ttlMs: number } | null {
  const p = parsePayload(raw);
  if (p === null) return null;
  const expires = solvedUntil(p, voucherId, userId, now);
  return expires === 0 ? null : { challenge: p.challenge, ttlMs: Math.max(1, expires - now) };
}

/**
 * The payload's number solves its challenge, the challenge is ours (its signature), for this user
 * and sale, and not expired: what altcha-lib's verifySolution checks, plus who and what it is for.
 */
export function solves(p: Payload, voucherId: string, userId: string, now = Date.now()): boolean {
  return solvedUntil(p, voucherId, userId, now) > 0;
}

/** When the solved challenge expires (ms), or 0 when the payload does not solve one of ours for this user and sale. */
function solvedUntil(p: Payload, voucherId: string, userId: string, now: number): number {
  const params = paramsOf(p.salt);
  const expires = Number(params.get('expires')) * 1000;
  if (params.get('v') !== voucherId || params.get('u') !== userId || !(expires > now)) return 0;
  return sameHex(sha256Hex(p.salt + p.number), p.challenge) && sameHex(signatureOf(p.challenge), p.signature) ? expires : 0;
}
