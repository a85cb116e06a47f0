/**
 * The draw's function: its size, its reproducibility from the published seed, and its uniformity
 * (chi-square over many draws). Seeds here are derived from fixed strings, so the statistic is the
 * same on every run: the bounds are ordinary significance levels, and the test cannot flake.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { drawWinners, newSeed, seedHash, sortIds, verifyDraw } from '@/lib/seckill/reservation/draw';

const fixedSeed = (label: string) => createHash('sha256').update(label).digest('hex');

/** Pearson's statistic of observed counts against equal expectation. */
function chiSquare(counts: number[], total: number): number {
  const e = total / counts.length;
  return counts.reduce((s, o) => s + ((o - e) * (o - e)) / e, 0);
}

describe('drawWinners', () => {
  const reserved = ['1003', '17', '1001', '250', '99', '1002', '5'];

  it('picks min(stock, reserved) distinct reserved users', () => {
    const seed = newSeed();
    for (const stock of [0, 1, 3, 7, 50]) {
      const w = drawWinners(seed, reserved, stock);
      expect(w).toHaveLength(Math.min(stock, reserved.length));
      expect(new Set(w).size).toBe(w.length);
      for (const id of w) expect(reserved).toContain(id);
    }
  });

  it('is a function of (seed, the set of ids, stock): the stored order does not matter', () => {
    const seed = fixedSeed('order');
    const a = drawWinners(seed, reserved, 3);
    const b = drawWinners(seed, [...reserved].reverse(), 3);
    expect(b).toEqual(a);
    expect(drawWinners(fixedSeed('other'), reserved, 3)).not.toEqual(a);
    expect(sortIds(['10', '9', '100', '11'])).toEqual(['9', '10', '11', '100']);
  });

  it('verifyDraw accepts the published draw and rejects a wrong seed, a wrong commitment or other winners', () => {
    const seed = newSeed();
    const winners = drawWinners(seed, reserved, 3);
    const d = { seed, seedHash: seedHash(seed), stock: 3, reserved, winners };
    expect(verifyDraw(d)).toEqual({ ok: true });
    expect(verifyDraw({ ...d, seedHash: seedHash(newSeed()) }).ok).toBe(false);
    const other = reserved.find((id) => !winners.includes(id))!;
    expect(verifyDraw({ ...d, winners: [...winners.slice(1), other] })).toMatchObject({ ok: false, reason: expect.stringMatching(/winners/) });
    expect(verifyDraw({ ...d, seed: 'x'.repeat(64) }).ok).toBe(false);
  });

  it('every 2-of-5 winner set is equally likely: chi-square over 5000 draws', () => {
    const ids = ['1', '2', '3', '4', '5'];
    const counts = new Map<string, number>();
    const draws = 5000;
    for (let i = 0; i < draws; i++) {
      const key = sortIds(drawWinners(fixedSeed(`chi-square ${i}`), ids, 2)).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(10); // C(5, 2)
    const x2 = chiSquare([...counts.values()], draws);
    // 9 degrees of freedom: P(X² > 27.88) = 0.001 (not uniform), P(X² < 1.15) = 0.001 (too even to be random).
    expect(x2).toBeLessThan(27.88);
    expect(x2).toBeGreaterThan(1.15);
  });

  it('100 scripted of 1100 reservations, 110 units: over 2000 seeds the scripts win 110 × 100/1100 = 10 on average', () => {
    const ids = Array.from({ length: 1100 }, (_, i) => String(5000 + i));
    let total = 0;
    let most = 0;
    const draws = 2000;
    for (let i = 0; i < draws; i++) {
      const wins = drawWinners(fixedSeed(`scripts ${i}`), ids, 110).filter((id) => Number(id) < 5100).length;
      total += wins;
      most = Math.max(most, wins);
    }
    // The mean's sd is 2.86 / √2000 ≈ 0.064: ±0.3 is over 4 sd. No seed gives them half the units.
    expect(Math.abs(total / draws - 10)).toBeLessThan(0.3);
    expect(most).toBeLessThan(30);
  });

  it('every user of 12 wins 1 unit equally often, and the draw order is uniform too: chi-square over 6000 draws', () => {
    const ids = Array.from({ length: 12 }, (_, i) => String(1000 + i));
    const first = new Array<number>(12).fill(0);
    const draws = 6000;
    for (let i = 0; i < draws; i++) {
      const [w] = drawWinners(fixedSeed(`single ${i}`), ids, 1);
      first[ids.indexOf(w!)]!++;
    }
    const x2 = chiSquare(first, draws);
    // 11 degrees of freedom: P(X² > 31.26) = 0.001, P(X² < 1.83) = 0.001.
    expect(x2).toBeLessThan(31.26);
    expect(x2).toBeGreaterThan(1.83);
  });
});
