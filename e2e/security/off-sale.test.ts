/**
 * Taking a voucher down does not fail open (proof suite). The console's Redis connection runs
 * through a TCP proxy the test cuts: the take-down commits in MySQL while Redis, unreachable,
 * keeps the sale open. A grab in that gap is accepted by Redis but the worker refuses to write it
 * (dead letter with the off-sale reason); once Redis is reachable again the take-down reaches it
 * without anyone pressing a button.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis, createRedis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { closeMq } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { takeDownVoucher } from '@/lib/voucher/update-voucher';
import { OFF_SALE_REASON } from '@/lib/order/off-sale';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { createTestUsers, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

const PROXY_PORT = 3127; // inside this suite's own port range
let f: ConsoleFixture;
let users: TestUser[];
let worker: OrderWorker;
const proxy = new TcpProxy(PROXY_PORT, Number(new URL(env.REDIS_URL).port || 6379));

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  users = await createTestUsers(db, redis, 1);
  worker = await startOrderWorker({ batchWaitMs: 5 });
  await proxy.start();
});
afterAll(async () => {
  await worker.stop();
  await proxy.close();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

describe('take-down while Redis is unreachable', () => {
  it('a grab in the gap never becomes an order, and Redis catches up on its own', async () => {
    const created = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 3 }) });
    const voucherId = created.json.data.id as string;
    const url = new URL(env.REDIS_URL);
    url.port = String(PROXY_PORT);
    const consoleRedis = createRedis(url.toString(), { maxRetriesPerRequest: 1, connectTimeout: 300, retryStrategy: () => 200 });
    try {
      await proxy.cut();
      const down = await takeDownVoucher(db, consoleRedis, { id: f.merchantA.id, role: 'merchant' }, voucherId);
      expect(down.redisSynced).toBe(false);
      expect(down.voucher.state).toBe('taken_down');

      // Redis never heard of it: the grab is accepted there…
      const g = await callRoute(grabRoute, { method: 'POST', token: users[0]!.token, params: { voucherId }, headers: { [PEER_HEADER]: '198.51.100.51' } });
      expect(g.status).toBe(200);
      // …but the worker refuses it against MySQL's window.
      const dead = await waitFor('dead letter', async () =>
        (await sql<{ reason: string; order_id: string }>`SELECT reason, order_id FROM tb_order_dead_letter WHERE voucher_id = ${voucherId}`.execute(db)).rows[0]);
      expect(dead.reason).toBe(OFF_SALE_REASON);
      expect(String(dead.order_id)).toBe(g.json.data.orderId);
      expect(Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_voucher_order WHERE voucher_id = ${voucherId}`.execute(db)).rows[0]!.n)).toBe(0);

      // Redis comes back: the background retry closes the window there too.
      await proxy.restore();
      await waitFor('Redis closed the sale', async () => {
        const end = Number(await redis.hget(keys.seckillMeta(voucherId), 'end'));
        return end > 0 && end <= Date.now();
      }, 40_000);
      const late = await callRoute(grabRoute, { method: 'POST', token: f.consumer.token, params: { voucherId }, headers: { [PEER_HEADER]: '198.51.100.52' } });
      expect(late.status).toBe(403);
    } finally {
      consoleRedis.disconnect();
    }
  });
});
