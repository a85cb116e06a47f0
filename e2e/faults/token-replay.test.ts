/**
 * A room sale's grab token replayed across a Redis loss (docs/fair-sale.md#a-redis-loss-in-the-room).
 * The token is checked without Redis; only its one-time use lives there (the spent set), and so
 * does the buyers set that refuses a second grab. A private redis-server without persistence (a
 * default one) is SIGKILLed and restarted, so both are gone at once, as in production.
 *
 * The window: the first grab's order is confirmed by RabbitMQ (that is what its 200 means) but not
 * yet in MySQL when the sale is rebuilt after the loss, so the rebuilt buyers set lacks its buyer.
 * In production that is a worker behind by a storm's backlog, or held up by the loss itself; here
 * the order worker is simply not running until after the replay, which opens the window every time
 * instead of by chance. What the replay must not get: a 200 (a second "order" that the worker would
 * fold into the first: a 200 that is no order), a second order, a unit lost.
 *
 * A real restart rather than a FLUSH of the sale's keys: the restart also drops the connections and
 * the loaded scripts and changes the server's run_id (which the worker's repair watches), and it
 * loses the sessions with the rest; a FLUSH would simulate some of that and could hide a difference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '@/e2e/support/redis-server';

// A port of its own (the suite's Redis is shared by other files and must never be killed).
const PORT = Number(process.env.TOKEN_REPLAY_TEST_REDIS_PORT ?? 3693);
process.env.REDIS_URL = `redis://127.0.0.1:${PORT}/0`;
process.env.REDIS_CLUSTER_NODES = '';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hmdp-token-replay-'));
let server: RedisServer | undefined;
const startServer = async () => {
  server = await startRedisServer({ ports: [PORT], dir });
};

// lib/ reads REDIS_URL when first imported: only after the lines above.
const { db, closeDb } = await import('@/lib/db/client');
const { redis, closeRedis } = await import('@/lib/redis/client');
const { closeMq } = await import('@/lib/mq/connection');
const { callRoute } = await import('@/e2e/support/helpers');
const { PEER_HEADER } = await import('@/lib/http/client-ip');
const { POST: grabRoute } = await import('@/app/api/seckill/[voucherId]/route');
const { POST: joinRoute, GET: lookRoute } = await import('@/app/api/seckill/[voucherId]/room/route');
const { GET: challengeRoute } = await import('@/app/api/seckill/[voucherId]/room/challenge/route');
const { POST: tokenRoute } = await import('@/app/api/seckill/[voucherId]/room/token/route');
const { GET: orderRoute } = await import('@/app/api/orders/[id]/route');
const { startOrderWorker } = await import('@/lib/order/worker');
const { assertInvariants } = await import('@/lib/seckill/invariants');
const { readSeckillState } = await import('@/lib/seckill/state');
const { dbStockCounts } = await import('@/lib/seckill/seckill.repository');
const { createSession } = await import('@/lib/auth/session');
const { createTestUsers, waitFor } = await import('@/e2e/support/fixtures/seckill');
const { createRoomVoucher, solvedPayload } = await import('@/e2e/support/fixtures/room');
const { keys } = await import('@/lib/redis/keys');
type Worker = Awaited<ReturnType<typeof startOrderWorker>>;
type User = { userId: string; token: string };

let worker: Worker | undefined;
beforeAll(startServer);
afterAll(async () => {
  await worker?.stop();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

let ip = 0;
const call = (route: Parameters<typeof callRoute>[0], u: User, voucherId: string, o: { method?: string; body?: unknown; query?: Record<string, string> } = {}) =>
  callRoute(route, { method: o.method ?? 'POST', token: u.token, params: { voucherId }, body: o.body, query: o.query, headers: { [PEER_HEADER]: `10.89.0.${++ip & 255}` } });
const grab = (u: User, voucherId: string, g: string) => call(grabRoute, u, voucherId, { query: { g } });

/** Through the room as a browser goes: join, wait to be admitted, solve the gate, take a grab token. */
async function tokenFor(u: User, voucherId: string): Promise<string> {
  const j = await call(joinRoute, u, voucherId);
  expect(j.status).toBe(200);
  await waitFor('admitted', async () => (await call(lookRoute, u, voucherId, { method: 'GET' })).json?.data?.state === 'admitted', 20_000, 100);
  const c = await call(challengeRoute, u, voucherId, { method: 'GET' });
  expect(c.status).toBe(200);
  const t = await call(tokenRoute, u, voucherId, { body: { ticket: j.json.data.ticket, altcha: await solvedPayload(c.json) } });
  expect(t.status).toBe(200);
  return t.json.data.token as string;
}

/** The sessions went with the data: the same user logs in again. */
const loginAgain = async (u: User): Promise<User> => ({ userId: u.userId, token: await createSession(redis, { id: u.userId, nickName: 'x', icon: '', role: 'user' }) });

async function restartWithoutPersistence() {
  await server!.kill();
  await startServer(); // empty: no AOF, no RDB
  await waitFor('Redis answers again', async () => (await redis.ping().catch(() => '')) === 'PONG', 15_000, 50);
  expect(await redis.dbsize()).toBe(0);
}

describe('a grab token replayed after Redis lost the sale', () => {
  it('a token that won, replayed before its order reached MySQL, wins nothing: no second 200, no second order, no unit lost', async () => {
    const STOCK = 5;
    const voucherId = await createRoomVoucher(db, redis, { stock: STOCK });
    const [a, b] = (await createTestUsers(db, redis, 2)) as User[] as [User, User];
    const tokenA = await tokenFor(a, voucherId);
    const won = await grab(a, voucherId, tokenA);
    expect(won.status).toBe(200);
    const orderId = won.json.data.orderId as string;
    // The one-time use holds while Redis remembers it.
    expect((await grab(a, voucherId, tokenA)).json.error.code).toBe('ALREADY_BOUGHT');
    const [, , , epoch, nonce] = tokenA.split('.'); // g2.<vid>.<uid>.<epoch>.<nonce>.<expiry>.<sig>
    expect(await redis.hget(keys.seckillMeta(voucherId), 'epoch')).toBe(epoch);
    expect(await redis.sismember(keys.seckillSpent(voucherId), `${epoch}.${nonce}`)).toBe(1);
    // The order is in RabbitMQ (confirmed), not in MySQL: no worker runs yet.
    expect((await dbStockCounts(db, voucherId))?.orders).toBe(0);

    await restartWithoutPersistence();
    const a2 = await loginAgain(a);
    const replay = await grab(a2, voucherId, tokenA);
    // The grab rebuilt the sale from MySQL (the room flag too), without A among its buyers.
    expect(await redis.hget(keys.seckillMeta(voucherId), 'room')).toBe('1');
    const replayOrderId = replay.status === 200 ? (replay.json.data.orderId as string) : undefined;

    worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 2000, repairCheckMs: 60_000 });
    await waitFor('the queue drained into MySQL', async () => {
      const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
      return s?.pending === 0 && c?.orders === 1;
    });
    await new Promise((r) => setTimeout(r, 1000)); // a second message, if any, has had its turn
    const orders = await db.selectFrom('tb_voucher_order').select(['id', 'user_id']).where('voucher_id', '=', voucherId).execute();
    // What the replay was told, and, if it was a 200, what its buyer reads for that "order".
    const replaySeen = replayOrderId ? (await callRoute(orderRoute, { method: 'GET', token: a2.token, params: { id: replayOrderId } })).status : undefined;
    console.log(`replay after the loss: ${replay.status} ${replay.json?.error?.code ?? replay.json?.data?.status}${replayOrderId ? `, order ${replayOrderId} reads ${replaySeen}` : ''}; MySQL orders ${orders.length}`);

    // One order, the first one, A's.
    expect(orders.map((o) => [String(o.id), String(o.user_id)])).toEqual([[orderId, a.userId]]);
    // Refused, the replay left Redis without A (the rebuild ran before A's order reached MySQL):
    // the worker's repair round after a restart puts A back (production: it notices the new run_id
    // and repairs at once, +5 s and +30 s, the later rounds for orders still queued at the first).
    // This worker started after the restart, so it has no change to notice: its round, run here.
    expect(await worker.repair!.repairNow('restart')).toBeGreaterThanOrEqual(1);
    // No unit lost: MySQL and Redis agree with the stock.
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ initial: STOCK, dbOrders: 1, redisStock: STOCK - 1, dbStock: STOCK - 1 });
    // The replay is refused, not told 200 for an order that will never exist.
    expect(replay.status).toBe(403);

    // Another buyer still sells after the loss: the room and the gate again, one unit, one order.
    const b2 = await loginAgain(b);
    const tokenB = await tokenFor(b2, voucherId);
    expect(tokenB.split('.')[3]).not.toBe(epoch); // the sale's copy after the loss has an epoch of its own
    expect((await grab(b2, voucherId, tokenB)).status).toBe(200);
    await waitFor('B’s order', async () => (await dbStockCounts(db, voucherId))?.orders === 2);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 2, redisStock: STOCK - 2, dbStock: STOCK - 2 });
  });
});
