import { afterAll, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { dayKey, idTime } from '@/lib/id';
import { OrderIdPool } from '@/lib/id/pool';

afterAll(async () => {
  await closeRedis();
});

const seqOf = (id: string) => Number(BigInt(id) & 0xffffffffn);
const counter = async () => Number((await redis.get(keys.orderSeq(dayKey(Math.floor(Number((await redis.time())[0]) / 86400))))) ?? 0);

describe('order id pool (leased blocks of the daily sequence)', () => {
  it('four processes taking 3000 ids each at once: all unique, near the current time', async () => {
    const clients = Array.from({ length: 4 }, () => createRedis());
    try {
      const pools = clients.map((c) => new OrderIdPool(c, 64));
      const all = (await Promise.all(pools.map((p) => Promise.all(Array.from({ length: 3000 }, () => p.take()))))).flat().map((t) => t.id);
      expect(new Set(all).size).toBe(12_000);
      for (const id of all.slice(0, 50)) expect(Math.abs(idTime(id).getTime() - Date.now())).toBeLessThan(5000);
    } finally {
      await Promise.all(clients.map((c) => c.quit()));
    }
  });

  it('a refused grab gives its id back: refusals use no sequence numbers', async () => {
    const pool = new OrderIdPool(redis, 16);
    const first = await pool.take();
    const before = await counter();
    const refused = await Promise.all(Array.from({ length: 10 }, () => pool.take()));
    for (const t of refused) t.giveBack();
    const again = await Promise.all(Array.from({ length: 10 }, () => pool.take()));
    expect(new Set(again.map((t) => seqOf(t.id)))).toEqual(new Set(refused.map((t) => seqOf(t.id))));
    expect(again.map((t) => seqOf(t.id))).not.toContain(seqOf(first.id));
    // 21 ids handed out from one block of 16 plus at most one more lease: the counter moved by blocks, not by takes.
    expect((await counter()) - before).toBeLessThanOrEqual(16);
  });
});
