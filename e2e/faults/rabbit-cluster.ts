/**
 * npm run test:faults:rabbit — a RabbitMQ node lost in the middle of a sale
 * (docs/rabbitmq.md#a-node-lost-mid-sale). A fresh local 3-node cluster
 * (scripts/rabbitmq-cluster.sh); RABBITMQ_URL lists the three nodes. In this process: the grab
 * path (lib/seckill/grab.ts, its confirmed publishes on the shared channel), the order worker and
 * the payment-timeout consumer. Buyers grab at a steady rate, each retrying a 503 the way a client
 * would; 3 s in, the node that leads the orders queue is SIGKILLed (about a quarter of the
 * units sold by then). Required: the
 * longest stretch in which grabs were answered 503 and none 200 stays under the reconnect bound,
 * the sale sells out, and after the drain oversold = duplicates = lost = 0 with every invariant.
 *
 *   DATABASE_URL=… REDIS_URL=… npx tsx e2e/faults/rabbit-cluster.ts [--stock 1200] [--rate 60] [--via-victim] [--ci]
 *   RABBITMQ_CLUSTER_BASE_PORT=5701   the cluster's AMQP ports (BASE..BASE+2)
 */
import { execFileSync } from 'node:child_process';
import { runToExit, sleep } from './procs';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const CI = process.argv.includes('--ci');
const VIA_VICTIM = process.argv.includes('--via-victim');
const STOCK = arg('stock', CI ? 600 : 1200);
const RATE = arg('rate', 60);
const KILL_AFTER_MS = 3000;
/** The longest 503-only stretch allowed: a client's reconnect (every node tried at once, a fresh channel). */
const WINDOW_BOUND_MS = 5000;
const SALE_LIMIT_MS = 90_000;
const base = Number(process.env.RABBITMQ_CLUSTER_BASE_PORT ?? 5701);
const cluster = (...args: string[]) => execFileSync('bash', ['scripts/rabbitmq-cluster.sh', ...args], { encoding: 'utf8', env: { ...process.env, RABBITMQ_CLUSTER_BASE_PORT: String(base) } });
const log = (msg: string) => console.log(`[rabbit-cluster ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  log(`fresh 3-node RabbitMQ cluster on ${base}-${base + 2}; ${STOCK} units, ${RATE} grabs/s; processes connect to node ${VIA_VICTIM ? 1 : 2} first`);
  cluster('stop');
  const nodes = cluster('start').trim().split('\n').pop()!.split(',');
  // The queues are declared through node 1, so it leads them all (every one is a quorum queue);
  // the processes connect to node 2 first: their channels stay open across the leader election
  // the kill of node 1 causes, the case where a channel keeps nacking until it is reopened.
  // --via-victim: they connect to node 1 instead, so the kill moves every connection and every
  // channel declares the whole topology again while node 1 is down.
  process.env.RABBITMQ_URL = (VIA_VICTIM ? nodes : [nodes[1], nodes[2], nodes[0]]).join(',');
  process.env.MQ_PREFIX = `hmdp_rabbit_cluster_${process.pid}`;
  process.env.LOG_LEVEL ??= 'error';
  process.env.RATE_LIMITS = 'false';

  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { db, closeDb } = await import('@/lib/db/client');
  const { redis, closeRedis } = await import('@/lib/redis/client');
  const { closeMq } = await import('@/lib/mq/connection');
  const { seedDemo } = await import('@/lib/seed/seed');
  const { firstShopId } = await import('@/lib/seckill/seckill.repository');
  const { createTestUsers } = await import('@/e2e/support/fixtures/seckill');
  const { createSaleInShop } = await import('@/e2e/support/fixtures/order-lifecycle');
  const { grabVoucher } = await import('@/lib/seckill/grab');
  const { AppError } = await import('@/lib/errors');
  const { checkInvariants } = await import('@/lib/seckill/invariants');
  const { readSeckillState } = await import('@/lib/seckill/state');
  const { startOrderWorker } = await import('@/lib/order/worker');
  const { startTimeoutWorker } = await import('@/lib/order/timeout');
  const { names } = await import('@/lib/mq/topology');

  const { connectMq } = await import('@/lib/mq/connection');
  const { assertTopology, assertFeedTopology } = await import('@/lib/mq/topology');
  const first = await connectMq(nodes[0]);
  const declare = await first.createChannel();
  await assertTopology(declare);
  await assertFeedTopology(declare);
  await first.close();

  await ensureDatabase();
  await migrateToLatest(db);
  if (!(await firstShopId(db))) await seedDemo(db);
  const worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 1000, staleMs: 3000 });
  const timeouts = await startTimeoutWorker({ sweepIntervalMs: 0 });
  try {
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, STOCK);
    // More buyers than units: the sale sells out even if some grabs are refused for good.
    const users = await createTestUsers(db, redis, Math.ceil(STOCK * 1.2));

    // Who leads the orders queue (the quorum queue's leader node).
    const leader = () => {
      const out = execFileSync('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-q', '-n', `hmdpq1x${base}@localhost`, 'list_queues', 'name', 'leader', '--no-table-headers'], {
        encoding: 'utf8', env: { ...process.env, HOME: `/tmp/hmdp-rabbitmq-cluster-${base}`, RABBITMQ_CONF_ENV_FILE: '/dev/null', ERL_CRASH_DUMP: '/dev/null' },
      });
      const line = out.split('\n').find((l) => l.split('\t')[0] === names.ordersQueue);
      const m = /hmdpq(\d)x/.exec(line ?? '');
      if (!m) throw new Error(`no leader found for ${names.ordersQueue} in:\n${out}`);
      return Number(m[1]);
    };

    const accepted: { orderId: string; userId: string; at: number }[] = [];
    const refusals: { at: number; code: string }[] = [];
    let soldOut = false;
    let next = 0;
    let inFlight = 0;
    const t0 = Date.now();
    // One buyer: grab, and on a 503 (the order was not confirmed; the unit went back) try again.
    const buyer = async (i: number) => {
      const u = users[i]!;
      for (let tries = 0; tries < 200 && !soldOut; tries++) {
        try {
          const r = await grabVoucher(db, redis, { voucherId, userId: u.userId, ip: `10.9.${(i >> 8) & 255}.${i & 255}` });
          accepted.push({ orderId: r.orderId, userId: u.userId, at: Date.now() });
          return;
        } catch (err) {
          const code = err instanceof AppError ? err.code : 'ERROR';
          refusals.push({ at: Date.now(), code });
          if (code === 'SOLD_OUT') soldOut = true;
          if (code !== 'SERVICE_UNAVAILABLE' && code !== 'ERROR') return;
          await sleep(100);
        }
      }
    };
    const storm = new Promise<void>((resolve) => {
      let credit = 0;
      const timer = setInterval(() => {
        credit += RATE / 50;
        for (; credit >= 1 && next < users.length && !soldOut; credit--) {
          inFlight++;
          void buyer(next++).finally(() => inFlight--);
        }
        if ((next >= users.length || soldOut || Date.now() - t0 > SALE_LIMIT_MS) && inFlight === 0) {
          clearInterval(timer);
          resolve();
        }
      }, 20);
    });

    await sleep(KILL_AFTER_MS);
    const victim = leader();
    const before = accepted.length;
    const killedAt = Date.now();
    cluster('kill', String(victim));
    log(`SIGKILL node ${victim} (leads ${names.ordersQueue}) after ${before} accepted grabs`);
    await storm;
    const saleS = (Date.now() - t0) / 1000;

    // The longest stretch after the kill in which grabs were refused 503 and none was accepted.
    const events = [...accepted.map((a) => ({ at: a.at, ok: true })), ...refusals.filter((r) => r.code === 'SERVICE_UNAVAILABLE' || r.code === 'ERROR').map((r) => ({ at: r.at, ok: false }))]
      .filter((e) => e.at >= killedAt)
      .sort((a, b) => a.at - b.at);
    let worst = 0;
    let from: number | undefined;
    for (const e of events) {
      if (!e.ok) from ??= e.at;
      else if (from !== undefined) {
        worst = Math.max(worst, e.at - from);
        from = undefined;
      }
    }
    if (from !== undefined) worst = Math.max(worst, Date.now() - from);
    const firstAfter = accepted.find((a) => a.at > killedAt);
    const unavailable = refusals.filter((r) => r.code === 'SERVICE_UNAVAILABLE').length;
    const other = refusals.filter((r) => r.code === 'ERROR').length;

    // Drain: every 200 persisted (or recorded as failed), the outbox empty.
    const ids = accepted.map((a) => a.orderId);
    const drainStart = Date.now();
    for (;;) {
      const st = await readSeckillState(redis, voucherId);
      const inDb = new Set((await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute()).map((r) => r.id));
      if (st?.pending === 0 && ids.every((id) => inDb.has(id))) break;
      if (Date.now() - drainStart > 60_000) break;
      await sleep(250);
    }
    const drainS = (Date.now() - drainStart) / 1000;
    const inDb = new Set((await db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).execute()).map((r) => r.id));
    const failed = new Set((await db.selectFrom('tb_order_failure').select('order_id').where('order_id', 'in', ids.length ? ids : ['0']).execute()).map((r) => r.order_id));
    const lost = ids.filter((id) => !inDb.has(id) && !failed.has(id)).length;
    const report = await checkInvariants(db, redis, voucherId, { drained: true });

    console.log(`\n| units | accepted | sold out | 503s after the kill | other errors | first 200 after the kill | longest 503-only stretch | oversold | duplicates | lost | drain |`);
    console.log('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${STOCK} | ${accepted.length} | ${accepted.length === STOCK ? `yes, ${saleS.toFixed(1)} s` : `no (${saleS.toFixed(1)} s)`} | ${unavailable} | ${other} | ${firstAfter ? `${((firstAfter.at - killedAt) / 1000).toFixed(2)} s` : 'none'} | ${(worst / 1000).toFixed(2)} s | ${report.oversold} | ${report.duplicates} | ${lost} | ${drainS.toFixed(1)} s |`);
    if (report.violations.length) console.log(`invariants: ${report.violations.join('; ')}`);
    const ok = accepted.length === STOCK && worst <= WINDOW_BOUND_MS && report.oversold === 0 && report.duplicates === 0 && lost === 0 && report.violations.length === 0;
    console.log(ok ? 'PASS' : `FAIL (bound: the longest 503-only stretch ≤ ${WINDOW_BOUND_MS / 1000} s, every unit sold, 0 lost)`);
    return ok ? 0 : 1;
  } finally {
    await Promise.all([worker.stop(), timeouts.stop()]);
    await closeMq();
    await Promise.all([closeDb(), closeRedis()]);
  }
}

runToExit(main, () => {
  cluster('stop');
});
