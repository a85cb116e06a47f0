/**
 * The flash-sale storm: U users (real SMS login) hammer one fresh voucher of stock S through
 * POST /api/seckill/{id}, then the harness waits for the drain and checks MySQL and Redis.
 * Variants: `redis` (the product) and `db` (the grab as
 * one synchronous MySQL transaction, the baseline, preloaded by e2e/bench/hooks/grab-in-db.mjs).
 */
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { checkInvariants } from '@/lib/seckill/invariants';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';
import { missingOrders, prepareBenchDb, purgeOrderQueue, round } from '../setup';
import type { Scenario } from '../types';

export const scenario: Scenario = {
  description: 'U users storm one voucher of stock S; verify no oversell, no duplicates, nothing lost',
  variants: ['redis', 'db'],
  async run(h, a, strategy) {
    await prepareBenchDb();
    await purgeOrderQueue();
    const web = await h.startWeb(strategy === 'db' ? h.hooks('grab-in-db') : {});
    if (strategy === 'redis') await h.startWorkers(a.workers);
    const tokens = await h.loginUsers(web.url, redis, a.users);
    // Warm-up on a voucher of its own (JIT, Next's lazily loaded route modules, pools), so the
    // measured storm sees the steady state; --warmup 0 skips it.
    const warmupS = Number(a.extra.warmup ?? 3);
    if (warmupS > 0) {
      const warm = await createTestVoucher(db, redis, { stock: 1, preheat: strategy === 'redis', title: `bench warm-up ${strategy}` });
      await h.storm({ label: 'warm-up', url: web.url, path: `/api/seckill/${warm}`, method: 'POST', tokens, connections: 10, durationS: warmupS });
    }
    const voucherId = await createTestVoucher(db, redis, { stock: a.stock, preheat: strategy === 'redis', title: `bench ${strategy}` });

    const accepted = new Set<string>();
    let acceptedTwice = 0;
    const storm = await h.storm({
      label: `storm ${strategy}`,
      url: web.url,
      path: `/api/seckill/${voucherId}`,
      method: 'POST',
      tokens,
      connections: a.connections,
      durationS: a.duration,
      rate: a.rate,
      onResponse: (status, body) => {
        if (status !== 200) return;
        const id = (JSON.parse(body) as { data: { orderId: string } }).data.orderId;
        if (accepted.has(id)) acceptedTwice++;
        accepted.add(id);
      },
    });

    const stormEnd = Date.now();
    if (strategy === 'redis') {
      await waitFor('the drain', async () => {
        const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
        return s !== null && c !== undefined && s.pending === 0 && c.orders === s.buyers;
      }, 120_000, 100);
    }
    const drainS = (Date.now() - stormEnd) / 1000;
    await h.stopAll();

    const counts = (await dbStockCounts(db, voucherId))!;
    const state = await readSeckillState(redis, voucherId);
    const inv = strategy === 'redis' ? await checkInvariants(db, redis, voucherId, { drained: true }) : null;
    const lost = await missingOrders([...accepted]);
    const oversold = Math.max(0, counts.orders - a.stock) + Math.max(0, (state?.buyers ?? 0) - a.stock);
    const duplicates = counts.duplicateUsers + acceptedTwice;
    const line = {
      scenario: 'seckill',
      strategy,
      users: a.users,
      stock: a.stock,
      requests: storm.requests,
      rps: round(storm.rps),
      p50_ms: round(storm.p50Ms),
      p99_ms: round(storm.p99Ms),
      accepted: storm.statuses['200'] ?? 0,
      db_orders: counts.orders,
      oversold,
      duplicates,
      lost,
      drain_s: round(drainS, 2),
      redis_stock: state ? state.remaining : null,
      db_stock: counts.stock,
    };
    const failures = [
      ...(oversold ? [`oversold ${oversold}`] : []),
      ...(duplicates ? [`duplicates ${duplicates}`] : []),
      ...(lost ? [`lost ${lost}`] : []),
      ...(inv?.violations ?? []),
    ];
    const statuses = Object.entries(storm.statuses).map(([k, v]) => `${k}×${v}`).join(' ');
    return {
      line,
      rps: storm.rps,
      p99Ms: storm.p99Ms,
      failures,
      summary: [
        `strategy ${strategy}: ${a.users} users, stock ${a.stock}, ${a.connections} connections, ${a.rate ? `${a.rate} req/s offered (open loop)` : 'closed loop'}, ${round(storm.durationS)} s`,
        `  ${storm.requests} requests · ${line.rps} req/s · latency p50 ${line.p50_ms} ms, p99 ${line.p99_ms} ms · ${statuses}${storm.errors ? ` · ${storm.errors} errors` : ''}`,
        `  accepted ${line.accepted} · DB orders ${counts.orders} · oversold ${oversold} · duplicates ${duplicates} · lost ${lost} · drain ${line.drain_s} s`,
        `  stock left: Redis ${line.redis_stock ?? '—'}, DB ${counts.stock}${inv ? ` · invariants ${inv.violations.length ? 'VIOLATED' : 'hold'}` : ''}`,
      ],
    };
  },
};
