/**
 * The order lifecycle under load: U users storm a sale of stock S, a share of the buyers pay
 * through POST /api/orders/{id}/pay (as each user, over HTTP), the rest are left to time out.
 * Verifies stock left = initial − paid in MySQL and Redis and the invariants, and reports how late
 * the timeouts fired (cancel_time − deadline, p50 / max).
 *   npm run bench -- --scenario lifecycle --users 1000 --stock 300 --timeout 10 --pay 0.5
 */
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { checkInvariants } from '@/lib/seckill/invariants';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestVoucher, waitFor } from '@/e2e/support/fixtures/seckill';
import { orderSnapshots } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { prepareBenchDb, purgeOrderQueue, round } from '../setup';
import type { Scenario } from '../types';

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

export const scenario: Scenario = {
  description: 'storm a sale, pay a share of the orders, let the rest time out; stock left = initial − paid, timeout lateness',
  variants: ['redis'],
  async run(h, a) {
    const timeoutS = Number(a.extra.timeout ?? 10);
    const payShare = Number(a.extra.pay ?? 0.5);
    await prepareBenchDb();
    await purgeOrderQueue();
    const lifecycleEnv = { ORDER_PAY_TIMEOUT_SECONDS: String(timeoutS), ORDER_TIMEOUT_SWEEP_INTERVAL_MS: '2000' };
    const web = await h.startWeb(lifecycleEnv);
    await h.startWorkers(a.workers, lifecycleEnv);
    const tokens = await h.loginUsers(web.url, redis, a.users);
    const voucherId = await createTestVoucher(db, redis, { stock: a.stock, title: 'bench lifecycle' });

    const storm = await h.storm({ label: 'storm', url: web.url, path: `/api/seckill/${voucherId}`, method: 'POST', tokens, connections: a.connections, durationS: a.duration, rate: a.rate });
    await waitFor('the drain', async () => {
      const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
      return s !== null && c !== undefined && s.pending === 0 && c.orders === s.buyers;
    }, 120_000, 100);

    // Each buyer looks up its order and, with probability `pay`, pays it (as a client would).
    const line = h.progress('pay');
    let paid = 0;
    let refused = 0;
    let next = 0;
    const call = async (token: string, path: string, method = 'GET') => {
      const res = await fetch(`${web.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as { data?: { items?: { id: string; voucherId: string; orderStatus: number }[] } } };
    };
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < tokens.length; i = next++) {
          if (Math.random() >= payShare) continue;
          const mine = (await call(tokens[i]!, '/api/orders?page=1&size=5')).body.data?.items?.find((o) => o.voucherId === voucherId && o.orderStatus === 1);
          if (!mine) continue;
          const r = await call(tokens[i]!, `/api/orders/${mine.id}/pay`, 'POST');
          if (r.status === 200) paid++;
          else refused++;
          line(`${paid} paid, ${refused} refused`);
        }
      }),
    );
    line(`${paid} paid, ${refused} refused (past their deadline)`, true);

    const progress = h.progress('timeouts');
    await waitFor('every unpaid order timed out', async () => {
      const snaps = await orderSnapshots(db, voucherId, timeoutS);
      const left = snaps.filter((o) => o.status === 1 || o.stockReturn === 1).length;
      progress(`${left} unpaid or owed to Redis`);
      return left === 0;
    }, (timeoutS + 60) * 1000, 200);
    progress('all settled', true);
    await h.stopAll();

    const snaps = await orderSnapshots(db, voucherId, timeoutS);
    const paidRows = snaps.filter((o) => o.status === 2).length;
    const cancelled = snaps.filter((o) => o.status === 4);
    const late = cancelled.map((o) => o.latenessMs ?? 0);
    const inv = await checkInvariants(db, redis, voucherId, { drained: true });
    const failures = [
      ...inv.violations,
      ...(paidRows !== paid ? [`${paid} pay calls succeeded but ${paidRows} orders are paid`] : []),
      ...(inv.dbStock !== a.stock - paidRows ? [`DB stock ${inv.dbStock} ≠ initial ${a.stock} − paid ${paidRows}`] : []),
      ...(inv.redisStock !== a.stock - paidRows ? [`Redis stock ${inv.redisStock} ≠ initial ${a.stock} − paid ${paidRows}`] : []),
      ...(late.some((l) => l < 0) ? ['an order was cancelled before its deadline'] : []),
    ];
    return {
      rps: storm.rps,
      p99Ms: storm.p99Ms,
      failures,
      line: {
        scenario: 'lifecycle',
        users: a.users,
        stock: a.stock,
        accepted: storm.statuses['200'] ?? 0,
        paid: paidRows,
        cancelled: cancelled.length,
        db_stock: inv.dbStock,
        redis_stock: inv.redisStock,
        timeout_s: timeoutS,
        lateness_p50_ms: round(quantile(late, 0.5)),
        lateness_max_ms: round(quantile(late, 1)),
      },
      summary: [
        `lifecycle: ${a.users} users, stock ${a.stock}, pay share ${payShare}, payment window ${timeoutS} s`,
        `  storm ${storm.requests} requests, ${round(storm.rps)} req/s · accepted ${storm.statuses['200'] ?? 0}`,
        `  paid ${paidRows} (pay calls: ${paid} ok, ${refused} refused) · cancelled by timeout ${cancelled.length}`,
        `  stock left: DB ${inv.dbStock}, Redis ${inv.redisStock} (initial ${a.stock} − paid ${paidRows} = ${a.stock - paidRows}) · invariants ${inv.violations.length ? 'VIOLATED' : 'hold'}`,
        `  timeout lateness p50 ${round(quantile(late, 0.5))} ms, max ${round(quantile(late, 1))} ms`,
      ],
    };
  },
};
