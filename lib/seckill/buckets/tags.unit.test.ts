import { describe, expect, it } from 'vitest';
import { slotOf } from '@/lib/redis/slots';
import { keys } from '@/lib/redis/keys';
import { bucketTag, bucketTags, homeBucket, rangeOf } from '@/lib/seckill/buckets/tags';

describe('bucketTag', () => {
  it('bucket 0 is the voucher id itself: N = 1 keeps the keys every sale had', () => {
    expect(bucketTag('123', 0, 1)).toBe('123');
    expect(bucketTag('123', 0, 3)).toBe('123');
    expect(keys.seckillStock(bucketTag('123', 0, 3))).toBe('seckill:{123}:stock');
  });

  it('puts the N buckets in N different equal slot ranges (so N masters of a standard cluster), away from the edges', () => {
    for (let vid = 1; vid <= 300; vid++) {
      for (const n of [2, 3, 4, 6, 16]) {
        const slots = bucketTags(String(vid), n).map((t) => slotOf(keys.seckillStock(t)));
        expect(new Set(slots.map((s) => rangeOf(s, n))).size).toBe(n);
        for (const s of slots.slice(1)) {
          const r = rangeOf(s, n);
          const start = Math.floor((r * 16384) / n);
          const width = Math.floor(((r + 1) * 16384) / n) - start;
          expect(s - start).toBeGreaterThanOrEqual(Math.floor(width / 4));
          expect(s - start).toBeLessThan(Math.ceil((3 * width) / 4));
        }
      }
    }
  });

  it('is deterministic and rejects a bucket outside 0..n-1', () => {
    expect(bucketTag('77', 2, 3)).toBe(bucketTag('77', 2, 3));
    expect(bucketTag('77', 2, 3)).toMatch(/^77\.2\.\d+$/);
    expect(() => bucketTag('77', 3, 3)).toThrow(RangeError);
    expect(() => bucketTag('77', 1, 17)).toThrow(RangeError);
  });
});

describe('homeBucket', () => {
  it('is the decimal id modulo n, 0 for n = 1', () => {
    expect(homeBucket('1000000000000000007', 1)).toBe(0);
    expect(homeBucket('10', 3)).toBe(1);
    expect(homeBucket('1000000000000000007', 3)).toBe(Number(1000000000000000007n % 3n));
  });

  it('spreads sequential ids evenly', () => {
    const counts = [0, 0, 0, 0];
    for (let id = 5000; id < 9000; id++) counts[homeBucket(String(id), 4)]!++;
    expect(counts).toEqual([1000, 1000, 1000, 1000]);
  });
});
