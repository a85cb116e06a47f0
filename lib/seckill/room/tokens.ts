/**
 * The waiting room's signed values (docs/fair-sale.md#tickets-and-tokens), checked by any web
 * process without Redis:
 *
 *   ticket      t1.<vid>.<uid>.<position>.<expiry ms>.<sig>   a place in the room
 *   grab token  g2.<vid>.<uid>.<epoch>.<nonce>.<expiry ms>.<sig>
 *                                                             one try at the grab (the script spends the nonce,
 *                                                             if the sale's copy in Redis has this epoch)
 *
 * sig = base64url(HMAC-SHA256(key, the fields joined by '|')), the key derived from AUTH_SECRET
 * for this purpose only (a session cookie's signature can never pass as a ticket, nor one kind as
 * the other: the kind is signed too). Ids are decimal, an epoch hex, a nonce base64url: no field holds a '.'.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { env } from '@/lib/env';

let derived: Buffer | undefined;
const roomKey = () => (derived ??= createHmac('sha256', env.AUTH_SECRET).update('hmdp waiting room v1').digest());

/** The key the bot gate's altcha challenges are signed with (also derived from AUTH_SECRET, apart from the room's). */
let gateKey: string | undefined;
export const powKey = (): string => (gateKey ??= createHmac('sha256', env.AUTH_SECRET).update('hmdp bot gate v1').digest('hex'));

function sign(fields: string[]): string {
  return createHmac('sha256', roomKey()).update(fields.join('|')).digest('base64url');
}

function signed(fields: string[]): string {
  return `${fields.join('.')}.${sign(fields)}`;
}

/** The fields of a well-signed value of `kind` (a ticket has 4, a grab token 5), or null. */
function open(kind: 't1' | 'g2', value: string): string[] | null {
  if (value.length > 200) return null;
  const parts = value.split('.');
  if (parts.length !== (kind === 't1' ? 6 : 7) || parts[0] !== kind) return null;
  const fields = parts.slice(0, -1);
  const want = Buffer.from(sign(fields), 'base64url');
  const got = Buffer.from(parts.at(-1)!, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
  return parts.slice(1, -1);
}

export interface Ticket {
  voucherId: string;
  userId: string;
  position: number;
  expiresAt: number;
}

export function signTicket(t: Ticket): string {
  return signed(['t1', t.voucherId, t.userId, String(t.position), String(t.expiresAt)]);
}

/** The ticket if it is well signed, this user's, this sale's and not expired; else null. */
export function verifyTicket(value: string, voucherId: string, userId: string, now = Date.now()): Ticket | null {
  const f = open('t1', value);
  if (!f || f[0] !== voucherId || f[1] !== userId) return null;
  const position = Number(f[2]!);
  const expiresAt = Number(f[3]);
  if (!Number.isSafeInteger(position) || position < 1 || !(expiresAt > now)) return null;
  return { voucherId, userId, position, expiresAt };
}

/**
 * Whether `value` is a well-signed, unexpired ticket of this sale, whoever's (the user is not known
 * yet where it is asked: before the session is read, lib/seckill/room/room.ts fullFromMemory). A
 * forged or foreign one only sends its request the whole way, where Redis decides.
 */
export function ticketOf(value: string, voucherId: string, now = Date.now()): boolean {
  const f = open('t1', value);
  return f !== null && f[0] === voucherId && Number(f[3]) > now;
}

export interface GrabToken {
  voucherId: string;
  userId: string;
  /** `<epoch>.<random>`: what the grab script checks against the sale's epoch and spends. */
  nonce: string;
  expiresAt: number;
}

/** A fresh epoch for a sale's copy in Redis (lua/seckill-epoch-1.lua keeps the first one). */
export const newEpoch = (): string => randomBytes(8).toString('hex');

/**
 * A grab token bound to `epoch`, the sale's epoch in Redis when it was minted (grab-token.ts): after
 * a Redis loss the sale has another, and the grab refuses this one. '' only where no script reads it.
 */
export function issueGrabToken(voucherId: string, userId: string, ttlMs: number, now = Date.now(), epoch = ''): { token: string } & GrabToken {
  const random = randomBytes(12).toString('base64url');
  const expiresAt = now + ttlMs;
  return { token: signed(['g2', voucherId, userId, epoch, random, String(expiresAt)]), voucherId, userId, nonce: `${epoch}.${random}`, expiresAt };
}

/**
 * The nonce of a grab made by the room itself, buying on admission (grab-token.ts): epoch `*`, which
 * the grab script takes as minted by this copy of the sale in that very call, with nothing to record
 * as spent (nobody holds it to replay). Never in a signed token: grabTokenNonce refuses any epoch but
 * 16 hex digits (or none).
 */
export const SPEND_NOW_NONCE = '*';

/** The `<epoch>.<nonce>` of a grab token that is well signed, this user's, this sale's and not expired; else null. */
export function grabTokenNonce(value: string, voucherId: string, userId: string, now = Date.now()): string | null {
  const f = open('g2', value);
  if (!f || f[0] !== voucherId || f[1] !== userId || !/^(?:[0-9a-f]{16})?$/.test(f[2]!) || !/^[A-Za-z0-9_-]{16}$/.test(f[3]!)) return null;
  return Number(f[4]) > now ? `${f[2]}.${f[3]}` : null;
}
