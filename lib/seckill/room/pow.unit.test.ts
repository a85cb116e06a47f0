/**
 * The bot gate's challenge is altcha's format, made and checked with node:crypto (pow.ts): what the
 * widget and altcha-lib solve and check must be exactly what this makes and accepts, both ways.
 */
import { describe, expect, it } from 'vitest';
import { createChallenge, solveChallenge, verifySolution } from 'altcha-lib';
import type { Challenge } from 'altcha-lib/types';
import { newChallenge, parsePayload, solves } from '@/lib/seckill/room/pow';
import { powKey } from '@/lib/seckill/room/tokens';

const COST = 500;

async function payloadFor(c: Challenge, number?: number): Promise<string> {
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  if (!s) throw new Error('altcha-lib found no solution');
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: number ?? s.number, salt: c.salt, signature: c.signature })).toString('base64');
}

describe('the bot gate challenge (altcha format, node:crypto)', () => {
  it('altcha-lib solves a challenge made here, and its verifySolution accepts the solution', async () => {
    for (let i = 0; i < 5; i++) {
      const c = newChallenge('7', '42', COST);
      expect(c).toMatchObject({ algorithm: 'SHA-256', maxnumber: COST });
      expect(c.salt).toMatch(/^[0-9a-f]{24}\?v=7&u=42&expires=\d+&$/);
      const raw = await payloadFor(c);
      expect(await verifySolution(raw, powKey(), true)).toBe(true);
      expect(solves(parsePayload(raw)!, '7', '42')).toBe(true);
    }
  });

  it('a challenge altcha-lib makes with our key and the same parameters is accepted here', async () => {
    const c = await createChallenge({ hmacKey: powKey(), maxnumber: COST, expires: new Date(Date.now() + 60_000), params: { v: '7', u: '42' } });
    expect(solves(parsePayload(await payloadFor(c))!, '7', '42')).toBe(true);
  });

  it('a wrong number, another key, another user or sale, an expired or an altered challenge is refused', async () => {
    const now = Date.now();
    const c = newChallenge('7', '42', COST, now);
    const good = parsePayload(await payloadFor(c))!;
    expect(solves(good, '7', '42', now)).toBe(true);
    expect(solves({ ...good, number: good.number + 1 }, '7', '42', now)).toBe(false);
    expect(solves(good, '7', '43', now)).toBe(false);
    expect(solves(good, '8', '42', now)).toBe(false);
    expect(solves(good, '7', '42', now + 11 * 60_000)).toBe(false);
    // Signed with another key (a challenge somebody made themselves).
    const theirs = await createChallenge({ hmacKey: 'not-our-key', maxnumber: COST, expires: new Date(now + 60_000), params: { v: '7', u: '42' } });
    expect(solves(parsePayload(await payloadFor(theirs))!, '7', '42', now)).toBe(false);
    // Another salt (a longer expiry) with the same challenge and signature.
    expect(solves({ ...good, salt: good.salt.replace(/expires=\d+/, 'expires=9999999999') }, '7', '42', now)).toBe(false);
    // Garbage is not a payload at all.
    expect(parsePayload('bm90IGpzb24=')).toBeNull();
    expect(parsePayload('x'.repeat(3000))).toBeNull();
  });
});
