/**
 * The draw (docs/fair-sale.md#the-draw): which reserved users win the right to buy. A pure,
 * deterministic function of (seed, reserved user ids, stock), so anyone holding the published seed
 * and the list of reservations can run it again and get the same winners.
 *
 *   - the seed is 32 random bytes, written as 64 hex digits; its commitment is SHA-256(seed bytes),
 *     published when reservations open, the seed itself once the draw has run;
 *   - the reserved ids are sorted as numbers (ascending), so the order they were stored in does not matter;
 *   - a partial Fisher–Yates shuffle picks k = min(stock, reserved) of them: step i swaps position i
 *     with i + r, r uniform in [0, n − i). The random numbers are HMAC-SHA256(key = seed bytes,
 *     message = the decimal counter 0, 1, 2, …), first 6 bytes as a big-endian 48-bit integer; a
 *     value ≥ the largest multiple of (n − i) below 2^48 is rejected and the next counter is used
 *     (no modulo bias).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';

const TWO_48 = 2 ** 48;

export function newSeed(): string {
  return randomBytes(32).toString('hex');
}

export function seedHash(seed: string): string {
  return createHash('sha256').update(Buffer.from(seed, 'hex')).digest('hex');
}

export function isSeed(s: unknown): s is string {
  return typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
}

/** Ids as numbers, ascending (decimal strings of BIGINT UNSIGNED: compare length, then text). */
export function sortIds(ids: readonly string[]): string[] {
  return [...ids].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}

/** The winners, in draw order. Throws on a malformed seed; duplicate ids count once. */
export function drawWinners(seed: string, reservedIds: readonly string[], stock: number): string[] {
  if (!isSeed(seed)) throw new Error('a seed is 64 lowercase hex digits');
  const ids = sortIds([...new Set(reservedIds)]);
  const n = ids.length;
  const k = Math.max(0, Math.min(Math.floor(stock), n));
  const key = Buffer.from(seed, 'hex');
  let counter = 0;
  const uniform = (m: number): number => {
    const limit = TWO_48 - (TWO_48 % m);
    for (;;) {
      const r = createHmac('sha256', key).update(String(counter++)).digest().readUIntBE(0, 6);
      if (r < limit) return r % m;
    }
  };
  for (let i = 0; i < k; i++) {
    const j = i + uniform(n - i);
    const t = ids[i]!;
    ids[i] = ids[j]!;
    ids[j] = t;
  }
  return ids.slice(0, k);
}

export interface DrawRecord {
  seed: string;
  seedHash: string;
  stock: number;
  reserved: string[];
  winners: string[];
}

/** Anyone's check of a published draw: the seed matches its commitment and re-running it gives the same winners. */
export function verifyDraw(d: DrawRecord): { ok: true } | { ok: false; reason: string } {
  if (!isSeed(d.seed)) return { ok: false, reason: 'the seed is not 64 hex digits' };
  if (seedHash(d.seed) !== d.seedHash) return { ok: false, reason: 'the seed does not match the committed hash' };
  const again = drawWinners(d.seed, d.reserved, d.stock);
  const a = sortIds(again);
  const b = sortIds(d.winners);
  if (a.length !== b.length || a.some((x, i) => x !== b[i])) return { ok: false, reason: 'the winners are not what the seed draws' };
  return { ok: true };
}
