/**
 * The worker repairs a Redis that forgot the sale: a private redis-server without persistence
 * (a default one) is SIGKILLed and restarted mid-sale, so every buyer and the stock count are
 * gone; nobody grabs meanwhile (a grab would rebuild the voucher itself), and the worker's repair
 * must notice the new run_id and rebuild the sale from MySQL on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '@/e2e/support/redis-server';

// A port of its own (the suite's Redis is shared by other files and must never be killed).
const PORT = Number(process.env.REPAIR_TEST_REDIS_PORT ?? 3691);
process.env.REDIS_URL = `redis://127.0.0.1:${PORT}/0`;
process.env.REDIS_CLUSTER_NODES = '';
const dir = mkdtempSync(path.join(os.tmpdir(), 'hmdp-repair-'));
let server: RedisServer | undefined;

async function startServer() {
  server = await startRedisServer({ ports: [PORT], dir });
}
async function crashServer() {
  await server!.kill();
}

// lib/ reads REDIS_URL when first imported: only after the lines above.
const { db, closeDb } = await import('@/lib/db/client');
const { redis, closeRedis } = await import('@/lib/redis/client');
const { closeMq } = await import('@/lib/mq/connection');
const { callRoute } = await import('@/e2e/support/helpers');
const { PEER_HEADER } = await import('@/lib/http/client-ip');
const { POST: grabRoute } = await import('@/app/api/seckill/[voucherId]/route');
const { startOrderWorker } = await import('@/lib/order/worker');
const { assertInvariants } = await import('@/lib/seckill/invariants');
const { readSeckillState } = await import('@/lib/seckill/state');
const { dbStockCounts } = await import('@/lib/seckill/seckill.repository');
const { changeBetween } = await import('@/lib/seckill/repair');
const { createSession } = await import('@/lib/auth/session');
const { createTestUsers, createTestVoucher, waitFor } = await import('@/e2e/support/fixtures/seckill');
type Worker = Awaited<ReturnType<typeof startOrderWorker>>;

let worker: Worker;
beforeAll(async () => {
  await startServer();
  worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 2000, repairCheckMs: 200, repairDelaysMs: [0, 1500] });
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
  await server?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const grab = (token: string, voucherId: string, i: number) =>
  callRoute(grabRoute, { method: 'POST', token, params: { voucherId }, headers: { [PEER_HEADER]: `10.88.${i >> 8}.${i & 255}` } });
const drained = (voucherId: string, orders: number) =>
  waitFor('the drain', async () => {
    const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
    return s !== null && s.pending === 0 && c?.orders === orders && s.buyers === orders;
  });
const repairs = async (reason: string) => (await worker.metrics.repairs.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;

describe('automatic Redis repair in the worker', () => {
  it('a fingerprint change says failover when a slot range changed masters, restart when only a run_id did', () => {
    const fp = (owner: string, run: string) => ({ owners: new Map([['0-5460', owner]]), runIds: new Map([['127.0.0.1:7000', run]]) });
    expect(changeBetween(fp('a', 'r1'), fp('a', 'r1'))).toBeNull();
    expect(changeBetween(fp('a', 'r1'), fp('a', 'r2'))).toBe('restart');
    expect(changeBetween(fp('a', 'r1'), fp('b', 'r3'))).toBe('failover');
  });

  it('Redis restarts without persistence mid-sale: the worker rebuilds buyers and stock from MySQL by itself', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 30 });
    const users = await createTestUsers(db, redis, 12);
    for (let i = 0; i < 10; i++) expect((await grab(users[i]!.token, voucherId, i)).status).toBe(200);
    await drained(voucherId, 10);
    expect(await worker.repair!.checkNow()).toBeNull(); // nothing changed yet: no repair
    expect(await repairs('restart')).toBe(0);

    await crashServer();
    await startServer(); // empty: no AOF, no RDB
    // The worker notices the new run_id and repairs; nobody grabs meanwhile (a grab would rebuild it too).
    await waitFor('the worker’s repair', async () => {
      const s = await readSeckillState(redis, voucherId).catch(() => null);
      return s !== null && s.buyers === 10 && s.remaining === 20;
    }, 15_000);
    expect(await repairs('restart')).toBeGreaterThanOrEqual(1);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ initial: 30, dbOrders: 10, redisStock: 20, dbStock: 20 });

    // The sessions went with the data: log in again. A former buyer is still refused, a new one sells.
    const again = await createSession(redis, { id: users[0]!.userId, nickName: 'x', icon: '', role: 'user' });
    expect((await grab(again, voucherId, 0)).json.error.code).toBe('ALREADY_BOUGHT');
    const fresh = await createSession(redis, { id: users[10]!.userId, nickName: 'y', icon: '', role: 'user' });
    expect((await grab(fresh, voucherId, 10)).status).toBe(200);
    await drained(voucherId, 11);
    // The later round (+1.5 s) finds nothing to fix: the numbers stay.
    await new Promise((r) => setTimeout(r, 1800));
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ dbOrders: 11, redisStock: 19, dbStock: 19 });
  });
});
