import { describe, expect, it } from 'vitest';
import { bucketShares } from '@/lib/seckill/buckets/shares';

const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);

describe('bucketShares', () => {
  it('a first preheat splits the stock evenly, the remainder to the first buckets', () => {
    expect(bucketShares(10, [null, null, null], 0, [0, 0, 0])).toEqual([4, 3, 3]);
    expect(bucketShares(2, [null, null, null], 0, [0, 0, 0])).toEqual([1, 1, 0]);
  });

  it('keeps the shares a rebalance left, when they sum to the total', () => {
    expect(bucketShares(10, [7, 1, 2], 0, [3, 1, 2])).toEqual([7, 1, 2]);
  });

  it('a lost bucket gets what the others and the moves in flight do not hold', () => {
    expect(bucketShares(10, [7, null, 1], 0, [0, 0, 0])).toEqual([7, 2, 1]);
    expect(bucketShares(10, [5, null, 1], 2, [0, 0, 0])).toEqual([5, 2, 1]);
    expect(bucketShares(10, [null, null, 4], 0, [0, 0, 0])).toEqual([3, 3, 4]);
  });

  it('an add-stock is spread over every bucket', () => {
    expect(bucketShares(13, [7, 1, 2], 0, [0, 0, 0])).toEqual([8, 2, 3]);
  });

  it('a shortfall is taken from the buckets with the most unsold units, never below their buyers', () => {
    expect(bucketShares(8, [4, 3, 3], 0, [4, 1, 2])).toEqual([4, 1, 3]);
    // Not enough unsold anywhere: shares stop at the buyers.
    expect(bucketShares(5, [4, 3, 3], 0, [4, 3, 2])).toEqual([4, 3, 2]);
  });

  it('shares plus in-flight units always make the total when there is room', () => {
    for (let t = 0; t < 200; t++) {
      const n = 1 + (t % 5);
      const current = Array.from({ length: n }, (_, b) => ((t * 7 + b * 3) % 4 === 0 ? null : (t * 13 + b * 5) % 20));
      const inFlight = t % 3;
      const total = 60 + (t % 11);
      expect(sum(bucketShares(total, current, inFlight, Array(n).fill(0))) + inFlight).toBe(total);
    }
  });
});
