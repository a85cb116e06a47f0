/**
 * Buying on admission in place order (docs/fair-sale.md#buying-on-admission), in a file of its own
 * so its buyers' turns can be long: 24 buyers who passed the gate while waiting are bought for at
 * their turn, in the places of the pre-start shuffle, by the sale's clock too. A buyer late for their
 * turn lets the places behind go first, by design (docs/fair-sale.md#in-turn, tested in
 * room.test.ts with the 3 s turn); here that would be this test's own lag on a loaded CI box, so
 * the turn is 15 s (and the hold the product's 20 s): as long as nobody is late, neither length
 * changes anything. The order that decides is the sale's clock (each order's create_time).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () =>
  (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '20', SECKILL_USER_PER_SECOND: '100', ROOM_HOLD_MS: '20000', ROOM_TURN_MS: '15000' }),
);

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { createTestUsers, waitDrained } from '@/e2e/support/fixtures/seckill';
import { callJoin as join, callLook as look, createRoomVoucher, solvedPayload } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';
import { shuffledIds } from '@/lib/seckill/room/room';
import { newChallenge } from '@/lib/seckill/room/pow';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

describe('buying on admission', () => {
  it('the waiting who passed the gate are bought for at their turn, by the look that learns of it, in place order (the shuffled one before the start)', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 30, startsInMs: 2500 });
    const users = await createTestUsers(db, redis, 24);
    // Before the start: a place each, with the challenge to solve while waiting.
    const challenges = new Map<string, ReturnType<typeof newChallenge>>();
    for (const u of users) {
      const j = await join(u, voucherId);
      expect(j.json.data.state).toBe('waiting');
      challenges.set(u.userId, j.json.data.challenge);
    }
    // Solved first, as while waiting: this test's own lag (solving, 24 joins, a loaded CI box) must
    // not make a buyer late for their turn, whose moment then ends and lets the places behind go
    // first (by design: docs/fair-sale.md#in-turn); that is tested below. (Once, on a CI box busy
    // with other files, solving with altcha-lib's ~50 µs hashes made place 2 late: 5th, not 2nd.)
    const solved = new Map(await Promise.all(users.map(async (u) => [u.userId, await solvedPayload(challenges.get(u.userId)!)] as const)));
    // Half hand in the solution with a join that waits for the turn (one request); half pass the
    // gate with a join that does not wait, then wait with a look with buy=1.
    const heard: { userId: string; position: number; orderId: string }[] = [];
    await Promise.all(
      users.map(async (u, i) => {
        const altcha = solved.get(u.userId)!;
        let r;
        if (i % 2 === 0) r = await join(u, voucherId, { altcha, buy: true, wait: 15_000 });
        else {
          const passed = await join(u, voucherId, { altcha });
          expect(passed.status).toBe(200);
          expect(passed.json.data.state).toBe('waiting');
          expect(passed.json.data.purchase).toBeUndefined();
          r = await look(u, voucherId, { wait: 15_000, buy: 1 });
        }
        expect(r.status).toBe(200);
        expect(r.json.data.state).toBe('admitted');
        expect(r.json.data.purchase).toMatchObject({ status: 'pending' });
        heard.push({ userId: u.userId, position: r.json.data.position, orderId: r.json.data.purchase.orderId });
      }),
    );
    // Each buyer heard the place the shuffle gave them (re-run from the published seed). The order
    // in which this process read the answers is not the sale's: two answers ~50 ms apart were read
    // in either order by a test process on a loaded CI box (twice, with a 3 s and a 15 s turn); the
    // sale's own clock below is the order that decides.
    const seed = (await redis.hget(keys.roomState(voucherId), 'seed'))!;
    const byPlace = shuffledIds(seed, users.map((u) => u.userId).sort((a, b) => Number(a) - Number(b)));
    const inPlaceOrder = [...heard].sort((a, b) => a.position - b.position);
    expect(inPlaceOrder.map((h) => h.userId)).toEqual(byPlace);
    expect(inPlaceOrder.map((h) => h.position)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    await waitDrained(db, redis, voucherId, 24);
    // The sale's own clock (the grab script's, each order's create_time) sold them in place order too.
    const rows = await db.selectFrom('tb_voucher_order').select(['user_id', 'create_time']).where('voucher_id', '=', voucherId).execute();
    const soldAt = new Map(rows.map((r) => [String(r.user_id), new Date(r.create_time).getTime()]));
    const times = byPlace.map((id) => soldAt.get(id)!);
    expect(times.every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true);
    // At 20 admissions a second the 24 took about a second, not one instant.
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(700);
    await assertInvariants(voucherId, { drained: true });
  });
});
