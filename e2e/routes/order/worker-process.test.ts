/**
 * The worker as a real process: SIGKILL it in the middle of a drain and start another, or
 * SIGTERM it and check it stops cleanly within 10 s. Every accepted order ends up in MySQL
 * exactly once either way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { assertInvariants } from '@/lib/seckill/invariants';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, createTestVoucher, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const METRICS_PORT = 25603;
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

/** `tsx workers/background.ts` in one process (no npx wrapper), so signals reach the worker itself. */
function spawnWorker(extra: Record<string, string> = {}, stdout: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/background.ts'], {
    env: {
      ...process.env,
      WORKER_BATCH_SIZE: '5',
      WORKER_PREFETCH: '20',
      WORKER_BATCH_WAIT_MS: '2',
      // Recovery must come from the broker's redelivery, not from the outbox sweeper.
      OUTBOX_STALE_MS: '600000',
      LOG_LEVEL: 'warn',
      ...extra,
    },
    stdio: ['ignore', stdout, 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

const exited = (c: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) resolve({ code: c.exitCode, signal: c.signalCode });
    else c.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** The nice value of every thread of a process (Linux keeps one per thread; getpriority takes a thread id). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      return [getPriority(Number(tid))];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

const orderCount = async (voucherId: string) => (await dbStockCounts(db, voucherId))?.orders ?? 0;

/** n users grab at once through the real route; no worker runs yet, so the orders wait in the queue. */
async function queueGrabs(n: number): Promise<{ voucherId: string; orderIds: string[] }> {
  const voucherId = await createTestVoucher(db, redis, { stock: n });
  const users = await createTestUsers(db, redis, n);
  const block = randomInt(0, 250);
  const results = await Promise.all(
    users.map((u, i) =>
      callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.${block}.${i >> 8}.${i & 255}` } }),
    ),
  );
  expect(results.every((r) => r.status === 200)).toBe(true);
  return { voucherId, orderIds: results.map((r) => r.json.data.orderId as string) };
}

async function expectExactlyOnce(voucherId: string, orderIds: string[]) {
  await waitFor(
    'the drain',
    async () => (await readSeckillState(redis, voucherId))?.pending === 0 && (await orderCount(voucherId)) === orderIds.length,
    30_000,
  );
  const rows = await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute();
  expect(rows.map((r) => r.id).sort()).toEqual([...orderIds].sort());
  await assertInvariants(voucherId, { drained: true });
}

describe('order worker process', () => {
  it('SIGKILL mid-drain, then a restart: every accepted order in MySQL exactly once', async () => {
    const { voucherId, orderIds } = await queueGrabs(1500);
    const first = spawnWorker();
    const atKill = await waitFor('the drain to start', async () => {
      const n = await orderCount(voucherId);
      return n >= 100 && n;
    }, 30_000, 5);
    first.kill('SIGKILL');
    expect((await exited(first)).signal).toBe('SIGKILL');
    const afterKill = await orderCount(voucherId);
    // Really mid-drain: the kill left work behind for the next worker.
    expect(atKill).toBeLessThan(orderIds.length);
    expect(afterKill).toBeLessThan(orderIds.length);

    const second = spawnWorker();
    await expectExactlyOnce(voucherId, orderIds);
    second.kill('SIGTERM');
    expect((await exited(second)).code).toBe(0);
  });

  it('runs every thread at WORKER_NICE (the grab path goes first), and as started with 0', async () => {
    const { voucherId, orderIds } = await queueGrabs(200);
    const niced = spawnWorker({ WORKER_NICE: '7' });
    await expectExactlyOnce(voucherId, orderIds); // it works at that priority, and has started every part
    const nices = threadNices(niced.pid!);
    expect(nices.length).toBeGreaterThan(1); // node's helper threads too, not only the main one
    expect(new Set(nices)).toEqual(new Set([7]));
    niced.kill('SIGTERM');
    expect((await exited(niced)).code).toBe(0);

    const plain = spawnWorker({ WORKER_NICE: '0', LOG_LEVEL: 'info' }, 'pipe');
    let out = '';
    plain.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor('the worker to start', async () => out.includes('order worker started'), 30_000, 10);
    // As started: the priority it inherited from this test process.
    expect(new Set(threadNices(plain.pid!))).toEqual(new Set(threadNices(process.pid).slice(0, 1)));
    plain.kill('SIGTERM');
    expect((await exited(plain)).code).toBe(0);
  });

  it('SIGTERM while it is still starting: it finishes starting, then stops cleanly (exit 0)', async () => {
    const child = spawnWorker({ LOG_LEVEL: 'info' }, 'pipe');
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    // The first line comes once the signal handlers are in, before the broker, MySQL and Redis.
    await waitFor('the worker to begin starting', async () => out.includes('order worker starting'), 15_000, 2);
    child.kill('SIGTERM');
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(out).toContain('order worker stopped cleanly');
  });

  it('SIGTERM mid-drain: stops within 10 s, acks what it wrote, the next worker finishes', async () => {
    const { voucherId, orderIds } = await queueGrabs(1000);
    const first = spawnWorker();
    await waitFor('the drain to start', async () => (await orderCount(voucherId)) >= 50, 30_000, 5);
    const t0 = Date.now();
    first.kill('SIGTERM');
    const { code } = await exited(first);
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const persistedByFirst = await orderCount(voucherId);

    // Whatever the first worker persisted it also acked: the next one meets no duplicates.
    const second = spawnWorker({ WORKER_METRICS_PORT: String(METRICS_PORT) });
    await expectExactlyOnce(voucherId, orderIds);
    // The drain can finish before the new worker's metrics endpoint listens (the orders travel in v2 batches now).
    const metrics = await waitFor('the metrics endpoint', async () => {
      const res = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`).catch(() => null);
      return res?.ok ? res.text() : null;
    }, 10_000, 100);
    expect(metrics).toMatch(/^hmdp_orders_duplicate_total 0$/m);
    expect(metrics).toMatch(new RegExp(`^hmdp_orders_persisted_total ${orderIds.length - persistedByFirst}$`, 'm'));
    second.kill('SIGTERM');
    expect((await exited(second)).code).toBe(0);
  });
});
