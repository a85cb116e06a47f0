/**
 * The payment timeout survives the processes around it. A real worker process is SIGKILLed after
 * persisting the orders and before their deadline; a new one started after the deadline cancels
 * them from the delayed messages alone (its SQL backstop is pushed out of reach), within seconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.ORDER_PAY_TIMEOUT_SECONDS = '4';
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { assertInvariants } from '@/lib/seckill/invariants';
import { firstShopId } from '@/lib/seckill/seckill.repository';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/lib/seckill/testing';
import { createSaleInShop, grabAll, waitPersisted } from '@/lib/order/lifecycle-testing';
import { orderSnapshots } from '@/lib/order/lifecycle-testing.repository';

const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

function spawnWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/order-worker.ts'], {
    // Only the delayed messages may cancel: the backstop and the outbox sweeper are pushed out of reach.
    env: { ...process.env, ORDER_TIMEOUT_SWEEP_INTERVAL_MS: '600000', OUTBOX_SWEEP_INTERVAL_MS: '600000', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

const exited = (c: ChildProcess) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve())));

describe('timeout after a worker crash', () => {
  it('worker SIGKILLed before the deadline; the next worker cancels every order from the queue within seconds', async () => {
    const N = 20;
    const first = spawnWorker();
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, N);
    const users = await createTestUsers(db, redis, N);
    await grabAll(db, redis, voucherId, users.map((u) => u.userId));
    await waitPersisted(db, redis, voucherId, N, 30_000);
    first.kill('SIGKILL');
    await exited(first);

    const latestDeadline = Math.max(...(await db.selectFrom('tb_voucher_order').select('create_time').where('voucher_id', '=', voucherId).execute()).map((r) => r.create_time.getTime())) + 4000;
    await new Promise((r) => setTimeout(r, Math.max(0, latestDeadline + 1500 - Date.now())));
    // Past every deadline and nothing consumed the timeouts yet: all still unpaid.
    expect((await orderSnapshots(db, voucherId, 4)).map((o) => o.status)).toEqual(Array(N).fill(1));

    const restartedAt = Date.now();
    spawnWorker();
    await waitFor('every order cancelled by the restarted worker', async () => (await orderSnapshots(db, voucherId, 4)).every((o) => o.status === 4 && o.stockReturn === 2), 20_000, 100);
    const took = Date.now() - restartedAt;
    console.info(`restarted worker cancelled ${N} overdue orders ${took} ms after it was spawned (process start included)`);
    expect(took).toBeLessThan(10_000);
    expect((await orderSnapshots(db, voucherId, 4)).every((o) => o.cancelReason === 'timeout')).toBe(true);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: N, dbStock: N, dbOrders: 0 });
  }, 90_000);
});
