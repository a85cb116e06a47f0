import { afterAll, describe, expect, it, vi } from 'vitest';
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

  it('a block older than 10 s is not used, nor an id given back from it: the next take leases afresh', async () => {
    const pool = new OrderIdPool(redis, 16);
    const given = await pool.take();
    const kept = await pool.take(); // the same block still has 14 ids
    expect(seqOf(kept.id)).toBe(seqOf(given.id) + 1);
    given.giveBack();
    const realNow = performance.now.bind(performance);
    const later = vi.spyOn(performance, 'now').mockImplementation(() => realNow() + 10_001);
    try {
      const before = await counter();
      const fresh = await pool.take();
      expect(seqOf(fresh.id)).not.toBe(seqOf(given.id)); // the given-back id went with its stale block
      expect(seqOf(fresh.id)).toBeGreaterThan(seqOf(kept.id) + 14); // from a new lease, past the old block
      expect((await counter()) - before).toBeGreaterThanOrEqual(16);
      // While the new block is young, takes go on from it without another lease.
      const next = await pool.take();
      expect(seqOf(next.id)).toBe(seqOf(fresh.id) + 1);
    } finally {
      later.mockRestore();
    }
  });

  it('takeNow answers without a promise while the pool holds ids, and null (no lease wait) when it is empty', async () => {
    const pool = new OrderIdPool(redis, 16);
    expect(pool.takeNow()).toBeNull(); // nothing leased yet: the caller falls back on take()
    const first = await pool.take();
    const now = pool.takeNow();
    expect(now).not.toBeNull();
    expect(now).not.toBeInstanceOf(Promise);
    expect(seqOf(now!.id)).toBe(seqOf(first.id) + 1);
    now!.giveBack();
    expect(seqOf(pool.takeNow()!.id)).toBe(seqOf(now!.id)); // a given-back id is reused first
  });
});
