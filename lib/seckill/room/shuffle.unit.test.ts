/**
 * The pre-start shuffle is uniform: over many seeds, each ticket holder lands on each position
 * equally often (chi-square of the holder × position table), whatever the join order. The seeds
 * are derived from fixed strings, so the statistic is the same every run and cannot flake.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shuffledIds } from '@/lib/seckill/room/room';

const seedOf = (label: string) => createHash('sha256').update(label).digest('hex');

describe('the pre-start shuffle', () => {
  it('is reproducible from its seed and does not depend on the order the ids are given in', () => {
    const ids = ['5', '12', '7', '100', '3'];
    const seed = seedOf('room shuffle a');
    expect(shuffledIds(seed, ids)).toEqual(shuffledIds(seed, [...ids].reverse()));
    expect([...shuffledIds(seed, ids)].sort()).toEqual([...ids].sort());
  });

  it('puts every holder on every position equally often (chi-square, 5 holders × 5 positions, 6 000 shuffles)', () => {
    const ids = ['11', '22', '33', '44', '55'];
    const n = ids.length;
    const shuffles = 6000;
    const counts = ids.map(() => new Array<number>(n).fill(0));
    for (let s = 0; s < shuffles; s++) {
      shuffledIds(seedOf(`room shuffle ${s}`), ids).forEach((id, pos) => counts[ids.indexOf(id)]![pos]!++);
    }
    const expected = shuffles / n;
    let chi2 = 0;
    for (const row of counts) for (const c of row) chi2 += (c - expected) ** 2 / expected;
    // Independence table of a uniform permutation: (n-1)^2 = 16 degrees of freedom; 0.001 and
    // 0.999 quantiles of chi-square(16) are 3.94 and 39.25.
    expect(chi2).toBeGreaterThan(3.94);
    expect(chi2).toBeLessThan(39.25);
    // The first joiner gains nothing: position 1 goes to each holder about a fifth of the time.
    for (const row of counts) expect(Math.abs(row[0]! - expected)).toBeLessThan(4 * Math.sqrt(expected));
  });
});
