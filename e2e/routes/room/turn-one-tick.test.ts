/**
 * Buyers admitted in the same watcher tick buy in place order (docs/fair-sale.md#in-turn), whatever
 * each one's own round trips before the grab. A tick answers every parked look the counter reached
 * in one pass, in place order; but a buyer whose look did not pass the gate in the same request
 * asks Redis whether it passed before (one round trip more than a buyer whose join carried the
 * solution), so its grab went out after the grab of the place behind it. At 20 admissions a second
 * a tick rarely admits two (room.test.ts failed now and then on a loaded box); here every place is
 * admitted in one tick, and Redis MONITOR records the order the grab scripts added the buyers in.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Every place is admitted by the first tick after the start.
const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '100000' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { keys } from '@/lib/redis/keys';
import { shuffledIds } from '@/lib/seckill/room/room';
import { createTestUsers, waitDrained, waitFor } from '@/e2e/support/fixtures/seckill';
import { callJoin, callLook, createRoomVoucher, recordBuyersAdded, solvedPayload } from '@/e2e/support/fixtures/room';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);


describe('buyers admitted in one tick', () => {
  it('buy in place order, whether their request passed the gate or asked Redis whether it had', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 30, startsInMs: 2500 });
    const users = await createTestUsers(db, redis, 12);
    const challenges = new Map<string, Parameters<typeof solvedPayload>[0]>();
    for (const u of users) {
      const j = await callJoin(u, voucherId);
      expect(j.json.data.state).toBe('waiting');
      challenges.set(u.userId, j.json.data.challenge);
    }
    // The order the grab scripts add the buyers in, as Redis ran them.
    const { added, stop } = await recordBuyersAdded(voucherId);
    try {
      // Every other one hands in the solution with a join that waits (the gate passed in that
      // request); the rest pass the gate first, then wait with a look with buy=1 (which asks Redis
      // whether they passed before buying). All parked before the start.
      const answers = await Promise.all(
        users.map(async (u, i) => {
          const altcha = await solvedPayload(challenges.get(u.userId)!);
          if (i % 2 === 0) return callJoin(u, voucherId, { altcha, buy: true, wait: 15_000 });
          expect((await callJoin(u, voucherId, { altcha })).status).toBe(200);
          return callLook(u, voucherId, { wait: 15_000, buy: 1 });
        }),
      );
      for (const r of answers) expect(r.json.data?.purchase, JSON.stringify(r.json)).toMatchObject({ status: 'pending' });
      await waitFor('every buyer seen by MONITOR', async () => added.length === users.length, 10_000, 10);
    } finally {
      stop();
    }
    const seed = (await redis.hget(keys.roomState(voucherId), 'seed'))!;
    const byPlace = shuffledIds(seed, users.map((u) => u.userId).sort((a, b) => Number(a) - Number(b)));
    expect(added).toEqual(byPlace);
    await waitDrained(db, redis, voucherId, users.length);
    await assertInvariants(voucherId, { drained: true });
  }, 60_000);
});
