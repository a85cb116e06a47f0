/**
 * The grab route's look at a grab token (docs/fair-sale.md#the-grab-token), in memory only: the
 * token rides in the grab URL's query (`?g=`), so the URL of a room sale's grab is not known
 * before the room admitted its holder and the bot gate passed. Only the nonce's one-time use, and
 * whether the token's epoch is still the sale's in Redis (none minted before a Redis loss passes),
 * are left to the grab script.
 */
import type { AppError } from '@/lib/errors';
import { grabTokenNonce } from '@/lib/seckill/room/tokens';
import { isKnownRoomSale, needTicket } from '@/lib/seckill/room/room-memory';

/**
 * The `<epoch>.<nonce>` of a valid token; undefined when the URL carries none and the sale is not known here
 * to be a room sale (the script decides, and answers NO_TOKEN if it is one); the refusal when the
 * token is bad (forged, expired, someone else's, another sale's) or absent for a known room sale.
 */
export function grabTokenOf(url: string, voucherId: string, userId: string): string | undefined | AppError {
  const value = grabTokenParam(url);
  if (value === null) return isKnownRoomSale(voucherId) ? needTicket() : undefined;
  return grabTokenNonce(value, voucherId, userId) ?? needTicket();
}

/** The grab token a grab URL carries (`?g=`), unchecked; null when it carries none. */
export function grabTokenParam(url: string): string | null {
  const q = url.indexOf('?');
  return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get('g');
}
