import { afterAll, describe, expect, it } from 'vitest';
import { redis, closeRedis, createRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { composeId, dayKey, ID_EPOCH_SECONDS, idTime, nextOrderId } from '@/lib/id';

afterAll(async () => {
  await closeRedis();
});

const seqOf = (id: string) => Number(BigInt(id) & 0xffffffffn);

describe('order ids', () => {
  it('lay out 31 bits of seconds since the epoch above a 32-bit sequence', () => {
    const id = composeId(ID_EPOCH_SECONDS + 1000, 7);
    expect(id).toBe((1000n << 32n) | 7n);
    expect(idTime(id.toString()).getTime()).toBe((ID_EPOCH_SECONDS + 1000) * 1000);
    expect(() => composeId(ID_EPOCH_SECONDS - 1, 1)).toThrow();
    expect(() => composeId(ID_EPOCH_SECONDS, 2 ** 32)).toThrow();
    expect(dayKey(20089)).toBe('20250101');
  });

  it('are decimal strings beyond 2^53, near the current time', async () => {
    const id = await nextOrderId(redis);
    expect(id).toMatch(/^[1-9]\d{17,18}$/);
    expect(BigInt(id) > 2n ** 53n).toBe(true);
    expect(Math.abs(idTime(id).getTime() - Date.now())).toBeLessThan(5000);
  });

  it('are unique and increase in issue order across several connections at once', async () => {
    const clients = Array.from({ length: 4 }, () => createRedis());
    try {
      const perClient = await Promise.all(clients.map((c) => Promise.all(Array.from({ length: 1500 }, () => nextOrderId(c)))));
      const all = perClient.flat();
      expect(new Set(all).size).toBe(all.length);
      // One connection answers in order: its ids strictly increase.
      for (const ids of perClient) {
        for (let i = 1; i < ids.length; i++) expect(BigInt(ids[i]!) > BigInt(ids[i - 1]!)).toBe(true);
      }
      // Across connections: ordering by the sequence (the order Redis issued them) orders the ids too.
      const bySeq = [...all].sort((a, b) => seqOf(a) - seqOf(b));
      for (let i = 1; i < bySeq.length; i++) expect(BigInt(bySeq[i]!) > BigInt(bySeq[i - 1]!)).toBe(true);
    } finally {
      await Promise.all(clients.map((c) => c.quit()));
    }
  });

  it('asks again with Redis’ day when the caller’s clock is on another day', async () => {
    const today = Math.floor(Number((await redis.time())[0]) / 86400);
    const r = await runScript<[number, number]>(redis, 'seckill-order-id', [keys.orderSeq(dayKey(today - 1))], [today - 1]);
    expect(r).toEqual([-1, today]);
  });
});
