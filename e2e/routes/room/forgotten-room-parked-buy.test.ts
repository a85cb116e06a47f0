/**
 * After Redis forgot the room, a visitor's old parked look with `buy=1` buys at its OLD
 * place. X stood 12th of 12 (stock 12, holds on). Redis forgets the sale; twelve others re-join
 * (places 1..12, every unit held for them); X re-joins too with the gate's solution (no wait):
 * place 13, all held. X's look parked before the loss (wait, buy=1) is then answered `admitted` at
 * place 12 and buys: a unit the room held for one of the twelve admitted goes to X, and that
 * admitted buyer, within their hold, hears 已抢光 (docs/fair-sale.md#an-admitted-ticket-holds-a-unit).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '2', ROOM_HOLD_MS: '20000', SECKILL_USER_PER_SECOND: '100' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { forgetSaleKeys } from '@/e2e/support/fixtures/reservation';
import { callJoin, callLook, callToken, createRoomVoucher, solveGate } from '@/e2e/support/fixtures/room';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { keys } from '@/lib/redis/keys';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

describe('an old parked buy after Redis forgot the room', () => {
  it('does not buy at a place the new room no longer gives the visitor', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 12 });
    const users = await createTestUsers(db, redis, 24);
    const first = users.slice(0, 12);
    const others = users.slice(12);
    for (const u of first) await callJoin(u, voucherId);
    const x = first[11]!;
    const before = await callLook(x, voucherId);
    expect(before.json.data).toMatchObject({ state: 'waiting', position: 12 });
    const xSolution = await solveGate(x, voucherId);
    const othersSolutions = await Promise.all(others.map((u) => solveGate(u, voucherId)));
    const parked = callLook(x, voucherId, { wait: 15_000, buy: 1 });
    await new Promise((r) => setTimeout(r, 250));
    // Redis forgets the sale; twelve others re-join, then X (with the gate's solution, no wait).
    await forgetSaleKeys(redis, voucherId);
    const rejoined = await Promise.all(others.map((u) => callJoin(u, voucherId)));
    const xAgain = await callJoin(x, voucherId, { altcha: xSolution });
    const heard = await parked;
    const xPlace = await redis.zscore(keys.roomQueue(voucherId), x.userId);
    // The twelve admitted in the new room buy within their holds.
    const buys = await Promise.all(others.map((u, i) => callToken(u, voucherId, { ticket: rejoined[i]!.json.data.ticket, altcha: othersSolutions[i], grab: true })));
    const statuses = buys.map((b) => `${b.status}${b.status === 200 ? '' : ':' + (b.json?.error?.code ?? b.json?.code ?? '')}`);
    expect(xAgain.json.data).toMatchObject({ state: 'waiting', position: 13 });
    expect(Number(xPlace)).toBe(13);
    expect(heard.json.data?.purchase).toBeUndefined();
    expect(statuses.filter((s) => s === '200')).toHaveLength(12);
  }, 60_000);
});
