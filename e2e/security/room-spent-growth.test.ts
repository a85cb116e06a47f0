/**
 * `seckill:{vid}:spent`, the set of grab-token nonces a room sale's grabs used up, must not grow
 * with refusals. The grab script used to spend the token's nonce (SADD) before it checked the
 * forfeit set, so a user who bought and cancelled (forfeited) spent a nonce on every grab and was
 * refused FORFEITED each time; a look with `buy=1` mints a fresh token for an admitted user who
 * passed the gate and grabs with it at once, 120 a minute (`roomUser`), and the set lives until an
 * hour after the sale's end: ~170 000 dead nonces a day from one account. Now only an accepted grab
 * spends a nonce (lua/seckill-grab-16.lua checks the token last).
 *
 * Through the real routes: the room join, look, challenge, token, grab and cancel routes, with the
 * real worker persisting the order; every limit at its product default. Found by a review helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { createTestUsers, waitFor, waitOutShortLivedKeys, type TestUser } from '@/e2e/support/fixtures/seckill';
import { callJoin as join, callLook as look, callToken, createRoomVoucher, solveGate } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';
import { env } from '@/lib/env';

let worker: OrderWorker;

beforeAll(async () => {
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 1000, staleMs: 3000 });
});

afterAll(async () => {
  await worker.stop();
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cancel = (u: TestUser, id: string) => callRoute(cancelRoute, { method: 'POST', token: u.token, params: { id } });

/** Join, be admitted, solve the gate, buy with the token route (`grab: true`): the order id. */
async function buyThroughRoom(u: TestUser, voucherId: string): Promise<string> {
  const j = await join(u, voucherId);
  expect(j.status).toBe(200);
  await waitFor('admitted', async () => (await look(u, voucherId)).json?.data?.state === 'admitted', 20_000, 100);
  const r = await callToken(u, voucherId, { ticket: j.json.data.ticket, altcha: await solveGate(u, voucherId), grab: true });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.data.orderId as string;
}

describe('seckill:{vid}:spent', () => {
  it('a forfeited user\'s grabs (buy=1 looks, a fresh token each) spend no nonce', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 5 });
    const [a] = await createTestUsers(db, redis, 1);
    const spent = keys.seckillSpent(voucherId);

    // A real purchase through the room, persisted by the worker, then cancelled by its buyer.
    const orderId = await buyThroughRoom(a!, voucherId);
    await waitFor('order cancellable', async () => (await cancel(a!, orderId)).status === 200, 30_000, 200);
    expect(await redis.sismember(keys.seckillForfeit(voucherId), a!.userId)).toBe(1);
    expect(await redis.scard(spent)).toBe(1); // the nonce of the purchase

    // Looks with buy=1, paced under the grab script's own per-user limit (SECKILL_USER_PER_SECOND).
    const pace = Math.ceil(1000 / env.SECKILL_USER_PER_SECOND) + 20;
    for (let i = 0; i < 12; i++) {
      const r = await look(a!, voucherId, { buy: '1' });
      expect(r.status, JSON.stringify(r.json)).toBe(409);
      expect(r.json.error.code).toBe('FORFEITED');
      await sleep(pace);
    }
    // Each look minted a token and grabbed with it; the old script kept all 12 nonces.
    expect(await redis.scard(spent)).toBe(1);
    expect(await redis.scard(keys.seckillBuyers(voucherId))).toBe(0);
  }, 120_000);
});
