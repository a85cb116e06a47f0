/**
 * The waiting room's signed values (docs/fair-sale.md#tickets-and-tokens), checked by any web
 * process without Redis:
 *
 *   ticket      t1.<vid>.<uid>.<position>.<expiry ms>.<sig>   a place in the room
 *   grab token  g1.<vid>.<uid>.<nonce>.<expiry ms>.<sig>      one try at the grab (the script spends the nonce)
 *
 * sig = base64url(HMAC-SHA256(key, the fields joined by '|')), the key derived from AUTH_SECRET
 * for this purpose only (a session cookie's signature can never pass as a ticket, nor one kind as
 * the other: the kind is signed too). Ids are decimal, a nonce base64url: no field holds a '.'.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { env } from '@/lib/env';

let derived: Buffer | undefined;
const roomKey = () => (derived ??= createHmac('sha256', env.AUTH_SECRET).update('hmdp waiting room v1').digest());

/** The key the bot gate's altcha challenges are signed with (also derived from AUTH_SECRET, apart from the room's). */
export const powKey = (): string => createHmac('sha256', env.AUTH_SECRET).update('hmdp bot gate v1').digest('hex');

function sign(fields: string[]): string {
  return createHmac('sha256', roomKey()).update(fields.join('|')).digest('base64url');
}

function signed(fields: string[]): string {
  return `${fields.join('.')}.${sign(fields)}`;
}

/** The fields of a well-signed value of `kind` with 4 fields, or null. */
function open(kind: 't1' | 'g1', value: string): [string, string, string, string] | null {
  if (value.length > 200) return null;
  const parts = value.split('.');
  if (parts.length !== 6 || parts[0] !== kind) return null;
  const fields = parts.slice(0, 5);
  const want = Buffer.from(sign(fields), 'base64url');
  const got = Buffer.from(parts[5]!, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
  return [parts[1]!, parts[2]!, parts[3]!, parts[4]!];
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
  const position = Number(f[2]);
  const expiresAt = Number(f[3]);
  if (!Number.isSafeInteger(position) || position < 1 || !(expiresAt > now)) return null;
  return { voucherId, userId, position, expiresAt };
}

export interface GrabToken {
  voucherId: string;
  userId: string;
  nonce: string;
  expiresAt: number;
}

export function issueGrabToken(voucherId: string, userId: string, ttlMs: number, now = Date.now()): { token: string } & GrabToken {
  const nonce = randomBytes(12).toString('base64url');
  const expiresAt = now + ttlMs;
  return { token: signed(['g1', voucherId, userId, nonce, String(expiresAt)]), voucherId, userId, nonce, expiresAt };
}

/** The nonce of a grab token that is well signed, this user's, this sale's and not expired; else null. */
export function grabTokenNonce(value: string, voucherId: string, userId: string, now = Date.now()): string | null {
  const f = open('g1', value);
  if (!f || f[0] !== voucherId || f[1] !== userId || !/^[A-Za-z0-9_-]{16}$/.test(f[2])) return null;
  return Number(f[3]) > now ? f[2] : null;
}
