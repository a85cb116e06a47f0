/**
 * npm run test:faults — the fault suite. Two web instances and two workers on private MariaDB,
 * Redis (AOF) and RabbitMQ servers take a grab storm while we, in turn: SIGKILL a worker three
 * times, restart RabbitMQ, stop MariaDB for 10 s, kill a web instance, restart Redis (the workers
 * notice and repair the sale themselves, lib/seckill/repair.ts). After each fault: wait for the queue to drain and every flash-sale invariant (docs/flash-sale.md#invariants) to hold.
 * At the end: oversold = duplicates = lost = 0, or the run fails.
 *
 *   npm run test:faults              full size
 *   npm run test:faults -- --ci      the size npm test runs
 *   FAULT_PORT_BASE=3650 …           private ports (e2e/faults/procs.ts faultPorts)
 */
import { PrivateMariaDb, PrivateRabbit, PrivateRedis } from './private-services';
import { faultPorts, runToExit, sleep, waitFor } from './procs';
import { Cluster } from './cluster';
import { Storm } from './storm';
import { faultEnv, openStores } from './env';

const ci = process.argv.includes('--ci');
const RATE = ci ? 40 : 120; // offered grabs per second
const PHASE_MS = ci ? 4000 : 8000; // storm time around each fault
// Every user tries twice in a row (the second must be refused); enough users for the whole run:
// five phases, the 10 s database outage and the restarts, with a margin.
const USERS = Math.ceil(((RATE * (5 * (PHASE_MS / 1000) + 40)) / 2) * 1.3);

const ports = faultPorts(20, { mysql: 3481, redis: 6481, rabbit: 5681, webs: [3281, 3282] });
const [WEB1, WEB2] = ports.webs as [number, number];
const mysql = new PrivateMariaDb(ports.mysql);
const redisSrv = new PrivateRedis(ports.redis);
const rabbit = new PrivateRabbit(ports.rabbit, ports.rabbitDist);

function log(msg: string) {
  console.log(`[faults ${new Date().toISOString().slice(11, 19)}] ${msg}`);
}

async function main(): Promise<number> {
  log(`starting private MariaDB, Redis (AOF always), RabbitMQ; rate ${RATE}/s, ${USERS} users`);
  await Promise.all([mysql.start(), redisSrv.start(), rabbit.start()]);

  const env = faultEnv({ mysql: mysql.url, redis: redisSrv.url, rabbit: rabbit.url }, 'hmdp_fault', { ORDER_RETRY_BASE_MS: '500' });
  const { db, redis, seeded } = await openStores(env);
  const { createSession } = await import('@/lib/auth/session');
  const { preheatVoucher } = await import('@/lib/seckill/preheat');
  const { readSeckillState } = await import('@/lib/seckill/state');

  // A fresh sale with more stock than the storm can take, so every phase has orders in flight.
  const stock = USERS * 2;
  const shop = await db.selectFrom('tb_shop').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  const ins = await db.insertInto('tb_voucher').values({ shop_id: shop.id, title: `故障演练 ${Date.now()}`, pay_value: 100, actual_value: 1000, type: 1 }).executeTakeFirstOrThrow();
  const voucherId = String(ins.insertId);
  await db.insertInto('tb_seckill_voucher').values({ voucher_id: voucherId, initial_stock: stock, stock, begin_time: new Date(Date.now() - 60_000), end_time: new Date(Date.now() + 3600_000) }).execute();
  await preheatVoucher(db, redis, voucherId);
  log(`voucher ${voucherId}: stock ${stock} (seed: ${seeded.shops} shops)`);

  const users = [];
  const phones = Array.from({ length: USERS }, (_, i) => `166${String(i).padStart(8, '0')}`);
  await db.insertInto('tb_user').ignore().values(phones.map((phone) => ({ phone, nick_name: `fault_${phone.slice(-5)}`, password: null }))).execute();
  for (const u of await db.selectFrom('tb_user').select(['id', 'nick_name']).where('phone', 'in', phones).execute()) {
    users.push({ id: u.id, token: await createSession(redis, { id: u.id, nickName: u.nick_name, icon: '', role: 'user' }) });
  }

  const cluster = new Cluster(env, [WEB1, WEB2], 2);
  await cluster.start();
  log('2 web instances and 2 workers up');
  const alive = new Set(cluster.webPorts);
  const storm = new Storm(() => [...alive].map((p) => cluster.url(p)), users, voucherId, RATE);

  async function numbers() {
    const sv = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
    const orders = await db.selectFrom('tb_voucher_order').select((eb) => eb.fn.countAll<number>().as('n')).where('voucher_id', '=', voucherId).executeTakeFirstOrThrow();
    const r = await readSeckillState(redis, voucherId);
    return { initial: sv.initial_stock, dbStock: sv.stock, dbOrders: Number(orders.n), redisRemaining: r?.remaining ?? NaN, buyers: r?.buyers ?? NaN, pending: r?.pending ?? NaN };
  }
  const consistent = (n: Awaited<ReturnType<typeof numbers>>) =>
    n.pending === 0 && n.redisRemaining + n.buyers === n.initial && n.dbStock + n.dbOrders === n.initial && n.buyers === n.dbOrders;

  async function persistedIds(ids: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < ids.length; i += 1000) {
      const rows = await db.selectFrom('tb_voucher_order').select('id').where('id', 'in', ids.slice(i, i + 1000)).execute();
      rows.forEach((r) => out.add(r.id));
    }
    return out;
  }

  const rows: { fault: string; accepted: number; persisted: number; recovered: number; consistentMs: number }[] = [];
  async function phase(name: string, inject: () => Promise<void>, recover: () => Promise<void>) {
    storm.run(name);
    await sleep(PHASE_MS / 2);
    const t0 = Date.now();
    log(`fault: ${name}`);
    await inject();
    await sleep(PHASE_MS / 2);
    await recover();
    const mine = () => [...storm.accepted].filter(([, v]) => v.phase === name).map(([k]) => k);
    const stuck = mine().filter((id) => !persisted.has(id));
    const atRecovery = await persistedIds(stuck);
    await storm.drain();
    await waitFor(`consistency after "${name}"`, async () => consistent(await numbers()), 120_000, 250);
    const consistentMs = Date.now() - t0;
    const ids = mine();
    const done = await persistedIds(ids);
    done.forEach((id) => persisted.add(id));
    rows.push({ fault: name, accepted: ids.length, persisted: done.size, recovered: stuck.filter((id) => !atRecovery.has(id) && done.has(id)).length, consistentMs });
    log(`  ${name}: accepted ${ids.length}, persisted ${done.size}, consistent after ${(consistentMs / 1000).toFixed(1)} s`);
  }
  const persisted = new Set<string>();

  try {
    await phase('worker SIGKILL ×3', async () => {
      for (let i = 0; i < 3; i++) {
        await cluster.killWorker(1);
        await sleep(400);
        cluster.startWorker(1);
        await sleep(PHASE_MS / 8);
      }
    }, async () => {});
    await phase('RabbitMQ restart', () => rabbit.crash(), () => rabbit.start());
    await phase('MariaDB down 10 s', async () => {
      await mysql.crash();
      await sleep(10_000);
    }, () => mysql.start());
    await phase('web instance killed', async () => {
      alive.delete(WEB2);
      await cluster.killWeb(WEB2);
    }, async () => {
      await cluster.startWeb(WEB2);
      alive.add(WEB2);
    });
    // No repair from the test: the workers see the new run_id and rebuild the sale from MySQL.
    await phase('Redis restart (workers repair)', () => redisSrv.crash(), async () => {
      await redisSrv.start();
      await waitFor('web sees Redis again', async () => (await fetch(`${cluster.url(WEB1)}/api/health`)).ok, 30_000);
    });

    const n = await numbers();
    const accepted = [...storm.accepted.keys()];
    const inDb = await persistedIds(accepted);
    const lost = accepted.filter((id) => !inDb.has(id)).length;
    const dup = await db.selectFrom('tb_voucher_order').select('user_id').where('voucher_id', '=', voucherId).groupBy('user_id').having((eb) => eb.fn.countAll(), '>', 1).execute();
    const oversold = Math.max(0, n.dbOrders - n.initial) + (n.redisRemaining < 0 ? 1 : 0) + (n.dbStock < 0 ? 1 : 0);

    console.log('\n| fault | accepted | persisted | recovered after the fault | time to consistency |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.fault} | ${r.accepted} | ${r.persisted} | ${r.recovered} | ${(r.consistentMs / 1000).toFixed(1)} s |`);
    console.log(`\nrequests ${storm.sent}: ${[...storm.statuses].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    console.log(`final: initial ${n.initial}, redis remaining ${n.redisRemaining}, buyers ${n.buyers}, pending ${n.pending}, db stock ${n.dbStock}, db orders ${n.dbOrders}`);
    console.log(`oversold ${oversold} · duplicates ${dup.length} · lost ${lost} · orders persisted without an answer (timeouts) ${n.dbOrders - inDb.size}`);
    const checks = [oversold === 0, dup.length === 0, lost === 0, consistent(n), accepted.length > 0];
    const failed = checks.filter((c) => !c).length;
    console.log(`faults: ${checks.length - failed} passed, ${failed} failed`);
    return failed ? 1 : 0;
  } finally {
    await storm.drain();
    await cluster.stop();
    redis.disconnect();
    await db.destroy();
  }
}

runToExit(main, () => Promise.allSettled([mysql.stop(), redisSrv.stop(), rabbit.stop()]));
