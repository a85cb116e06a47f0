/**
 * npm run test:faults:rabbit-timeout — payment timeouts through the loss of the node that leads
 * the timeout queues (docs/rabbitmq.md#a-node-lost-while-timeouts-wait). A fresh local 3-node
 * cluster (scripts/rabbitmq-cluster.sh); the quorum delay and timeout queues are declared through
 * node 1, so it leads both. Orders are grabbed and persisted; once the broker has confirmed every
 * order's timeout message, node 1 is SIGKILLed while the messages wait out their TTL. The order
 * worker and the timeout consumer (this process, the SQL backstop off) connect to node 1 first by
 * default, so the kill moves their connections too (`--via-survivor`: node 2 first). Required: every
 * order cancelled by its message (none by the backstop: 0 lost), none before its deadline, each
 * unit back in MySQL and Redis, every invariant.
 *
 *   DATABASE_URL=… REDIS_URL=… npx tsx e2e/faults/rabbit-timeout.ts [--orders 40] [--timeout 20] [--via-survivor]
 *   RABBITMQ_CLUSTER_BASE_PORT=5701   the cluster's AMQP ports (BASE..BASE+2)
 */
import { execFileSync } from 'node:child_process';
import { runToExit, sleep } from './procs';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const ORDERS = arg('orders', 40);
const TIMEOUT_S = arg('timeout', 20);
const VIA_SURVIVOR = process.argv.includes('--via-survivor');
/** A timeout fired by message this long after its deadline at most (the election, the reconnect, a shared machine). */
const LATENESS_BOUND_MS = 15_000;
const base = Number(process.env.RABBITMQ_CLUSTER_BASE_PORT ?? 5701);
const clusterEnv = { ...process.env, RABBITMQ_CLUSTER_BASE_PORT: String(base) };
const cluster = (...args: string[]) => execFileSync('bash', ['scripts/rabbitmq-cluster.sh', ...args], { encoding: 'utf8', env: clusterEnv });
const log = (msg: string) => console.log(`[rabbit-timeout ${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** Which node leads each queue, asked of a node that is up. */
function leaders(askNode: number): Map<string, number> {
  const out = execFileSync('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-q', '-n', `hmdpq${askNode}x${base}@localhost`, 'list_queues', 'name', 'leader', '--no-table-headers'], {
    encoding: 'utf8',
    env: { ...process.env, HOME: `/tmp/hmdp-rabbitmq-cluster-${base}`, RABBITMQ_CONF_ENV_FILE: '/dev/null', ERL_CRASH_DUMP: '/dev/null' },
  });
  const m = new Map<string, number>();
  for (const line of out.split('\n')) {
    const [name, leader] = line.split('\t');
    const n = /hmdpq(\d)x/.exec(leader ?? '');
    if (name && n) m.set(name, Number(n[1]));
  }
  return m;
}

async function main(): Promise<number> {
  log(`fresh 3-node RabbitMQ cluster on ${base}-${base + 2}; ${ORDERS} orders, ${TIMEOUT_S} s payment window; processes connect to node ${VIA_SURVIVOR ? 2 : 1} first`);
  cluster('stop');
  const nodes = cluster('start').trim().split('\n').pop()!.split(',');
  process.env.RABBITMQ_URL = (VIA_SURVIVOR ? [nodes[1], nodes[2], nodes[0]] : nodes).join(',');
  process.env.MQ_PREFIX = `hmdp_rabbit_timeout_${process.pid}`;
  process.env.ORDER_PAY_TIMEOUT_SECONDS = String(TIMEOUT_S);
  process.env.LOG_LEVEL ??= 'error';
  process.env.RATE_LIMITS = 'false';

  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { db, closeDb } = await import('@/lib/db/client');
  const { redis, closeRedis } = await import('@/lib/redis/client');
  const { closeMq, connectMq } = await import('@/lib/mq/connection');
  const { seedDemo } = await import('@/lib/seed/seed');
  const { firstShopId } = await import('@/lib/seckill/seckill.repository');
  const { createTestUsers } = await import('@/e2e/support/fixtures/seckill');
  const { createSaleInShop, grabAll, waitPersisted } = await import('@/e2e/support/fixtures/order-lifecycle');
  const { orderSnapshots } = await import('@/e2e/support/fixtures/order-lifecycle.repository');
  const { checkInvariants } = await import('@/lib/seckill/invariants');
  const { startOrderWorker } = await import('@/lib/order/worker');
  const { startTimeoutWorker } = await import('@/lib/order/timeout');
  const { assertTopology, names } = await import('@/lib/mq/topology');

  // Declared through node 1: it leads every queue, the two timeout queues included.
  const first = await connectMq(nodes[0]);
  await assertTopology(await first.createChannel());
  await first.close();
  const delayQueue = names.timeoutDelayQueue(TIMEOUT_S * 1000);

  await ensureDatabase();
  await migrateToLatest(db);
  if (!(await firstShopId(db))) await seedDemo(db);
  const worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 1000, staleMs: 3000, metricsPort: 0 });
  const timeouts = await startTimeoutWorker({ sweepIntervalMs: 0 });
  try {
    const voucherId = await createSaleInShop(db, redis, (await firstShopId(db))!, ORDERS);
    const users = await createTestUsers(db, redis, ORDERS);
    await grabAll(db, redis, voucherId, users.map((u) => u.userId));
    await waitPersisted(db, redis, voucherId, ORDERS, 30_000);
    // The kill comes once the broker has confirmed every order's timeout message.
    const scheduled = async () => (await worker.metrics.timeoutsScheduled.get()).values.reduce((a, v) => a + v.value, 0);
    for (let t = 0; (await scheduled()) < ORDERS; t++) {
      if (t > 600) throw new Error(`only ${await scheduled()} of ${ORDERS} timeouts scheduled`);
      await sleep(50);
    }
    const before = leaders(1);
    const victim = before.get(delayQueue)!;
    if (victim !== 1 || before.get(names.timeoutQueue) !== 1) throw new Error(`node 1 should lead both timeout queues: ${JSON.stringify([...before])}`);
    const created = (await db.selectFrom('tb_voucher_order').select('create_time').where('voucher_id', '=', voucherId).execute()).map((r) => r.create_time.getTime());
    const firstDeadline = Math.min(...created) + TIMEOUT_S * 1000;
    const lastDeadline = Math.max(...created) + TIMEOUT_S * 1000;
    const killedAt = Date.now();
    cluster('kill', String(victim));
    log(`SIGKILL node ${victim} (leads ${delayQueue} and ${names.timeoutQueue}), ${((firstDeadline - killedAt) / 1000).toFixed(1)} s before the first deadline`);
    if (killedAt >= firstDeadline) throw new Error('the kill came after a deadline: lengthen --timeout');

    const done = async () => (await orderSnapshots(db, voucherId, TIMEOUT_S)).every((o) => o.status === 4 && o.stockReturn === 2);
    const limit = lastDeadline + LATENESS_BOUND_MS + 30_000;
    while (!(await done()) && Date.now() < limit) await sleep(250);
    let after = new Map<string, number>();
    try {
      after = leaders(2);
    } catch {
      /* reported as unknown */
    }
    const snaps = await orderSnapshots(db, voucherId, TIMEOUT_S);
    const cancelled = snaps.filter((o) => o.status === 4);
    const late = cancelled.map((o) => o.latenessMs!);
    const report = await checkInvariants(db, redis, voucherId, { drained: true });
    const lost = ORDERS - timeouts.stats.byMessage;

    console.log(`\n| orders | cancelled by message | by backstop | lost | earliest | latest (after the deadline) | new leader of the delay queue | invariants |`);
    console.log('|---:|---:|---:|---:|---:|---:|---|---|');
    console.log(
      `| ${ORDERS} | ${timeouts.stats.byMessage} | ${timeouts.stats.byBackstop} | ${lost} | ${late.length ? `${Math.min(...late).toFixed(0)} ms` : '–'} | ${late.length ? `${(Math.max(...late) / 1000).toFixed(2)} s` : '–'} | ${after.get(delayQueue) ? `node ${after.get(delayQueue)}` : 'unknown'} | ${report.violations.length ? report.violations.join('; ') : 'hold'} |`,
    );
    const ok =
      cancelled.length === ORDERS &&
      snaps.every((o) => o.stockReturn === 2) &&
      timeouts.stats.byBackstop === 0 &&
      lost === 0 &&
      Math.min(...late) >= 0 &&
      Math.max(...late) <= LATENESS_BOUND_MS &&
      report.violations.length === 0;
    console.log(ok ? 'PASS' : `FAIL (every order cancelled by its message, none early, none later than ${LATENESS_BOUND_MS / 1000} s, invariants)`);
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
