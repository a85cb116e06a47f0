/**
 * The payment timeout survives the processes around it. A real worker process is SIGKILLed after
 * persisting the orders and scheduling their timeouts, before their deadline; a new one started
 * after the deadline cancels them from the delayed messages alone (its SQL backstop is pushed out
 * of reach), within seconds. (A kill between the commit and the schedule leaves the orders to the
 * backstop, by design: 'timeout backstop' in e2e/routes/order/lifecycle.test.ts proves that one.)
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
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { orderSnapshots } from '@/e2e/support/fixtures/order-lifecycle.repository';

const children = new Set<ChildProcess>();
const METRICS_PORT = 25604;

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

function spawnWorker(extra: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/background.ts'], {
    // Only the delayed messages may cancel: the backstop and the outbox sweeper are pushed out of reach.
    env: { ...process.env, ORDER_TIMEOUT_SWEEP_INTERVAL_MS: '600000', OUTBOX_SWEEP_INTERVAL_MS: '600000', LOG_LEVEL: 'warn', ...extra },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** A counter of the worker's /metrics, or null while the endpoint does not answer. */
async function workerCounter(name: string): Promise<number | null> {
  const res = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`).catch(() => null);
  if (!res?.ok) return null;
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(await res.text());
  return m ? Number(m[1]) : null;
}

const exited = (c: ChildProcess) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve())));

describe('timeout after a worker crash', () => {
  it('worker SIGKILLed before the deadline; the next worker cancels every order from the queue within seconds', async () => {
    const N = 20;
    const first = spawnWorker({ WORKER_METRICS_PORT: String(METRICS_PORT) });
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, N);
    const users = await createTestUsers(db, redis, N);
    // Orders another file left in the queue are this worker's too: count only the ones after this.
    const scheduledBefore = await waitFor('the worker\'s metrics', async () => {
      const n = await workerCounter('hmdp_order_timeouts_scheduled_total');
      return n === null ? null : { n };
    }, 30_000, 50);
    await grabAll(db, redis, voucherId, users.map((u) => u.userId));
    await waitPersisted(db, redis, voucherId, N, 30_000);
    // The worker schedules the timeouts after the commit and the ack: kill it once the broker holds them.
    await waitFor('the timeouts of every order scheduled', async () => ((await workerCounter('hmdp_order_timeouts_scheduled_total')) ?? 0) >= scheduledBefore.n + N, 10_000, 20);
    expect(await workerCounter('hmdp_order_timeouts_unscheduled_total')).toBe(0);
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
