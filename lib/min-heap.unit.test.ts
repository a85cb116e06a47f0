import { describe, expect, it } from 'vitest';
import { MinHeap } from '@/lib/min-heap';

describe('MinHeap', () => {
  it('pops in key order, whatever the push order (duplicates included)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const n of [0, 1, 2, 3, 10, 1000]) {
      const keys = Array.from({ length: n }, () => Math.floor(random() * 50));
      const h = new MinHeap<{ k: number }>((x) => x.k);
      for (const k of keys) h.push({ k });
      expect(h.size).toBe(n);
      const out: number[] = [];
      while (h.size > 0) {
        const top = h.peek();
        expect(h.pop()).toBe(top);
        out.push(top!.k);
      }
      expect(out).toEqual([...keys].sort((a, b) => a - b));
      expect(h.pop()).toBeUndefined();
    }
  });

  it('rebuild keeps only the given items, in order', () => {
    const h = new MinHeap<number>((x) => x);
    for (const k of [5, 3, 9, 1]) h.push(k);
    h.rebuild([8, 2, 6, 4, 0]);
    const out: number[] = [];
    while (h.size > 0) out.push(h.pop()!);
    expect(out).toEqual([0, 2, 4, 6, 8]);
  });
});
