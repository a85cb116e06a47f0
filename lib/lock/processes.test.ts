/**
 * The lock across real OS processes: contenders in two processes lose no update, and a holder
 * killed with SIGKILL (no chance to release) blocks others only until its lease runs out.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, test } from 'vitest';
import { closeLocks, tryWithLock, withLock } from '@/lib/lock';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { deleteKeys } from '@/lib/redis/keyspace';
import { contender, killContenders } from '@/e2e/support/lock-spawn';

const run = randomUUID().slice(0, 8);
const created: string[] = [];

afterAll(async () => {
  killContenders();
  if (created.length) await deleteKeys(redis, created);
  await closeLocks();
});

describe('lock across processes', () => {
  test('2 processes × 200 contenders increment non-atomically inside the lock and lose no update', async () => {
    const lock = `test:lock-counter:${run}`;
    const key = `test:lock-counter:{${run}}`;
    const unlocked = `test:lock-unlocked:{${run}}`;
    created.push(key, unlocked, keys.lock(lock), keys.lockFence(lock));

    const procs = [0, 1].map(() => contender(['count', lock, key, unlocked, '200']));
    const results = await Promise.all(procs.map((p) => p.line('RESULT')));
    expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0]);

    expect(Number(await redis.get(key))).toBe(400);
    // The same increments without the lock do lose updates: the test can tell the difference.
    expect(Number(await redis.get(unlocked))).toBeLessThan(400);

    // Ordered by fence, the values written count up 1..400: fences follow the grant order.
    const grants = results.flatMap((r) => JSON.parse(r) as [number, number][]).sort((a, b) => a[0] - b[0]);
    expect(grants.map(([, written]) => written)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(new Set(grants.map(([fence]) => fence)).size).toBe(400);
  });

  test("a SIGKILLed holder's lock frees after its lease, not before", async () => {
    const lock = `test:lock-killed:${run}`;
    created.push(keys.lock(lock), keys.lockFence(lock));
    const leaseMs = 1000;
    const holder = contender(['hold', lock, String(leaseMs)]);
    const heldFence = Number(await holder.line('HELD'));

    // Alive, its watchdog keeps the 1 s lease going well past 1 s.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await tryWithLock(lock, {}, async () => 'stolen')).acquired).toBe(false);

    holder.child.kill('SIGKILL');
    await holder.exited;
    const killedAt = Date.now();
    const fence = await withLock(lock, { waitMs: 5000 }, async (_signal, f) => f);
    const waited = Date.now() - killedAt;
    expect(fence).toBeGreaterThan(heldFence);
    // Freed by expiry only (nobody released it): at most one lease after the kill, plus slack.
    expect(waited).toBeLessThan(leaseMs + 300);
    expect(waited).toBeGreaterThan(leaseMs / 3);
  });
});
