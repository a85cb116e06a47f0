/**
 * npm run test:faults:failover — a Redis Cluster failover in the middle of a sale. One web
 * instance and one worker run against a fresh local 3 + 3 cluster (scripts/redis-cluster.sh) and
 * private MariaDB / RabbitMQ; an open-loop grab storm runs while the master that owns the
 * voucher's slot is SIGKILLed and its replica takes over. Replication is asynchronous, so the new
 * master may not know grabs the old one had already accepted: we count them ("forgotten"), then
 * require 0 oversold, 0 duplicates, every accepted grab persisted or dead-lettered (the buyer's
 * status poll says `failed`), and, after the repair (preheat from MySQL), every invariant.
 *
 *   npx tsx e2e/faults/failover.ts [--wait-ms 50] [--rate 60] [--ci]
 */
import { execFileSync } from 'node:child_process';
import type { Cluster as RedisCluster } from 'ioredis';
import { PrivateMariaDb, PrivateRabbit } from './private-services';
import { sleep, waitFor } from './procs';
import { Cluster as Services } from './cluster';
import { Storm } from './storm';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const WAIT_MS = arg('wait-ms', 0);
const RATE = arg('rate', process.argv.includes('--ci') ? 40 : 80);
const BEFORE_MS = 4000;
const AFTER_MS = 8000;
const USERS = Math.ceil((RATE * (BEFORE_MS + AFTER_MS + 4000)) / 1000 / 2);

const mysql = new PrivateMariaDb(3483);
const rabbit = new PrivateRabbit(5683, 25683);
const cluster = (...args: string[]) => execFileSync('bash', ['scripts/redis-cluster.sh', ...args], { encoding: 'utf8' });
const log = (msg: string) => console.log(`[failover ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  log(`fresh Redis Cluster, private MariaDB and RabbitMQ; rate ${RATE}/s, WAIT ${WAIT_MS ? `1 ${WAIT_MS}` : 'off'}`);
  cluster('stop');
  const nodes = cluster('start').trim().split('\n').pop()!;
  await Promise.all([mysql.start(), rabbit.start()]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: mysql.url,
    REDIS_CLUSTER_NODES: nodes,
    RABBITMQ_URL: rabbit.url,
    MQ_PREFIX: 'hmdp_failover',
    AUTH_SECRET: process.env.AUTH_SECRET ?? 'fault-suite-secret-0123456789abcdef0123456789',
    RATE_LIMITS: 'false',
    LOG_LEVEL: 'warn',
    OUTBOX_SWEEP_INTERVAL_MS: '1000',
    OUTBOX_STALE_MS: '3000',
    SECKILL_REPLICA_WAIT_MS: String(WAIT_MS),
  };
  Object.assign(process.env, env, { LOG_LEVEL: 'error' });

  const { createDb } = await import('@/lib/db/client');
  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { createRedis } = await import('@/lib/redis/client');
  const { keys } = await import('@/lib/redis/keys');
  const { slotOf } = await import('@/lib/redis/slots');
  const { seedDemo } = await import('@/lib/seed/seed');
  const { createSession } = await import('@/lib/auth/session');
  const { preheatVoucher } = await import('@/lib/seckill/preheat');
  const { readSeckillState } = await import('@/lib/seckill/state');

  await ensureDatabase(mysql.url);
  const db = createDb(mysql.url, 5);
  await migrateToLatest(db);
  await seedDemo(db);
  const redis = createRedis() as RedisCluster;

  const stock = USERS * 2; // never sells out: every phase has grabs in flight
  const shop = await db.selectFrom('tb_shop').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  const ins = await db.insertInto('tb_voucher').values({ shop_id: shop.id, title: `故障转移 ${Date.now()}`, pay_value: 100, actual_value: 1000, type: 1 }).executeTakeFirstOrThrow();
  const voucherId = String(ins.insertId);
  await db.insertInto('tb_seckill_voucher').values({ voucher_id: voucherId, initial_stock: stock, stock, begin_time: new Date(Date.now() - 60_000), end_time: new Date(Date.now() + 3600_000) }).execute();
  await preheatVoucher(db, redis, voucherId);

  const phones = Array.from({ length: USERS }, (_, i) => `167${String(i).padStart(8, '0')}`);
  await db.insertInto('tb_user').ignore().values(phones.map((phone) => ({ phone, nick_name: `fo_${phone.slice(-5)}`, password: null }))).execute();
  const users = [];
  for (const u of await db.selectFrom('tb_user').select(['id', 'nick_name']).where('phone', 'in', phones).execute()) {
    users.push({ id: u.id, token: await createSession(redis, { id: u.id, nickName: u.nick_name, icon: '', role: 'user' }) });
  }

  const services = new Services(env, [3141], 1);
  await services.start();
  const storm = new Storm(() => [services.url(3141)], users, voucherId, RATE);

  // The master that owns the voucher's slot, and its pid.
  const ranges = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  const slot = slotOf(keys.seckillStock(voucherId));
  const victim = ranges.find(([a, b]) => slot >= a && slot <= b)![2][1];
  const pid = Number(/process_id:(\d+)/.exec(execFileSync('redis-cli', ['-p', String(victim), 'info', 'server'], { encoding: 'utf8' }))![1]);

  try {
    storm.run('before');
    await sleep(BEFORE_MS);
    const acceptedBefore = storm.accepted.size;
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    log(`SIGKILL master :${victim} (pid ${pid}, owns slot ${slot}) after ${acceptedBefore} accepted grabs`);
    storm.phase = 'after';
    // The first grab accepted after the kill marks the replica's takeover as the grab path sees it.
    const tookOverMs = await waitFor('a grab accepted by the new master', async () => [...storm.accepted.values()].some((v) => v.phase === 'after'), 30_000, 50);
    log(`the new master accepted a grab ${(tookOverMs / 1000).toFixed(1)} s after the kill`);
    await sleep(AFTER_MS);
    // Bounded: a request the failover left hanging must not hang the suite (each has a 5 s timeout).
    await Promise.race([storm.drain(), sleep(15_000)]);
    log(`storm over: ${storm.answers.length} accepted`);

    // Before any repair, what did the new master forget? A buyer answered 200 whom the buyers set
    // does not hold, or a buyer answered 200 twice (the first grab forgotten, the second accepted).
    const answers = storm.answers;
    const buyerSet = new Set(await redis.smembers(keys.seckillBuyers(voucherId)));
    log(`the new master holds ${buyerSet.size} buyers`);
    const perUser = new Map<string, number>();
    for (const x of answers) perUser.set(x.userId, (perUser.get(x.userId) ?? 0) + 1);
    const notKnown = [...perUser.keys()].filter((u) => !buyerSet.has(u)).length;
    const twice = [...perUser.values()].filter((n) => n > 1).length;
    const forgotten = notKnown + twice;

    // The queue drains; every accepted grab must be in MySQL or be a dead letter its buyer sees as failed.
    const ids = answers.map((x) => x.orderId);
    const inDb = async () => new Set((await db.selectFrom('tb_voucher_order').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
    const dead = async () => new Set((await db.selectFrom('tb_order_dead_letter').select('order_id').where('order_id', 'in', ids).execute()).map((r) => r.order_id!));
    await waitFor('every accepted grab persisted or dead-lettered', async () => {
      const [p, d] = await Promise.all([inDb(), dead()]);
      return ids.every((id) => p.has(id) || d.has(id));
    }, 120_000, 500);
    const [persisted, failed] = await Promise.all([inDb(), dead()]);

    // The repair: preheat rebuilds Redis from MySQL (buyers unioned in, stock recomputed); then
    // the grabs that were in flight without an answer drain too, and every invariant must hold.
    await preheatVoucher(db, redis, voucherId);
    const quiet = async () => {
      const st = (await readSeckillState(redis, voucherId))!;
      const dbRow = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
      const n = Number((await db.selectFrom('tb_voucher_order').select((eb) => eb.fn.countAll<number>().as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow()).n);
      return st.pending === 0 && st.buyers === n && st.remaining + st.buyers === dbRow.initial_stock && dbRow.stock + n === dbRow.initial_stock;
    };
    const repairedMs = await waitFor('invariants after the repair', quiet, 120_000, 500).catch(() => -1);
    log(repairedMs >= 0 ? `invariants hold ${(repairedMs / 1000).toFixed(1)} s after the repair` : 'invariants still broken 120 s after the repair');
    const sv = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
    const dbOrders = Number((await db.selectFrom('tb_voucher_order').select((eb) => eb.fn.countAll<number>().as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow()).n);
    const r = (await readSeckillState(redis, voucherId))!;
    const dup = await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).groupBy('user_id').having((eb) => eb.fn.countAll(), '>', 1).execute();
    const oversold = Math.max(0, dbOrders - sv.initial_stock) + (sv.stock < 0 ? 1 : 0) + (r.remaining < 0 ? 1 : 0);
    const consistent = r.pending === 0 && r.remaining + r.buyers === sv.initial_stock && sv.stock + dbOrders === sv.initial_stock && r.buyers === dbOrders;
    // A buyer accepted twice ends with one order (unique user + voucher); their other id is folded into it.
    const ordersOf = new Set((await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).execute()).map((r) => r.user_id));
    const silent = answers.filter((x) => !persisted.has(x.orderId) && !failed.has(x.orderId) && !(perUser.get(x.userId)! > 1 && ordersOf.has(x.userId))).length;

    console.log(`\n| WAIT | accepted | accepted before the kill | forgotten by the failover (not a buyer / accepted twice) | persisted | failed (dead letter) | silently lost | takeover seen by grabs |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${WAIT_MS ? `1 ${WAIT_MS} ms` : 'off'} | ${ids.length} | ${acceptedBefore} | ${forgotten} (${notKnown} / ${twice}) | ${persisted.size} | ${failed.size} | ${silent} | ${(tookOverMs / 1000).toFixed(1)} s |`);
    console.log(`\nrequests ${storm.sent}: ${[...storm.statuses].map(([k, v]) => `${k} ${v}`).join(', ')}; killed ${(Date.now() - killedAt) / 1000 | 0} s ago`);
    console.log(`after repair: initial ${sv.initial_stock}, redis remaining ${r.remaining}, buyers ${r.buyers}, pending ${r.pending}, db stock ${sv.stock}, db orders ${dbOrders}`);
    console.log(`oversold ${oversold} · duplicates ${dup.length} · silently lost ${silent} · invariants ${consistent ? 'hold' : 'BROKEN'}`);
    return oversold === 0 && dup.length === 0 && silent === 0 && consistent && ids.length > 0 ? 0 : 1;
  } finally {
    storm.pause();
    await services.stop();
    redis.disconnect();
    await db.destroy();
  }
}

main()
  .then(async (code) => {
    await Promise.allSettled([mysql.stop(), rabbit.stop()]);
    cluster('stop');
    process.exit(code);
  })
  .catch(async (e) => {
    console.error(e);
    await Promise.allSettled([mysql.stop(), rabbit.stop()]);
    process.exit(1);
  });
