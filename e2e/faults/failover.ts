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
import { countForgotten, createSale, passed, settle } from './sale';

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

  await ensureDatabase(mysql.url);
  const db = createDb(mysql.url, 5);
  await migrateToLatest(db);
  await seedDemo(db);
  const redis = createRedis() as RedisCluster;

  const { voucherId, users } = await createSale(db, redis, USERS, '167');

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
    log(`SIGKILL master :${victim} (pid ${pid}, owns slot ${slot}) after ${acceptedBefore} accepted grabs`);
    storm.phase = 'after';
    // The first grab accepted after the kill marks the replica's takeover as the grab path sees it.
    const tookOverMs = await waitFor('a grab accepted by the new master', async () => [...storm.accepted.values()].some((v) => v.phase === 'after'), 30_000, 50);
    log(`the new master accepted a grab ${(tookOverMs / 1000).toFixed(1)} s after the kill`);
    await sleep(AFTER_MS);
    // Bounded: a request the failover left hanging must not hang the suite (each has a 5 s timeout).
    await Promise.race([storm.drain(), sleep(15_000)]);
    log(`storm over: ${storm.answers.length} accepted`);

    // Before any repair, what did the new master forget?
    const { notKnown, twice } = await countForgotten(redis, voucherId, storm);
    const v = await settle(db, redis, voucherId, storm);
    console.log(`\n| WAIT | accepted | accepted before the kill | forgotten by the failover (not a buyer / accepted twice) | persisted | failed (dead letter) | silently lost | takeover seen by grabs |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${WAIT_MS ? `1 ${WAIT_MS} ms` : 'off'} | ${v.accepted} | ${acceptedBefore} | ${notKnown + twice} (${notKnown} / ${twice}) | ${v.persisted} | ${v.failed} | ${v.silent} | ${(tookOverMs / 1000).toFixed(1)} s |`);
    console.log(`\nrequests ${storm.sent}: ${[...storm.statuses].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    console.log(`after repair: ${v.summary}`);
    console.log(`oversold ${v.oversold} · duplicates ${v.duplicates} · silently lost ${v.silent} · invariants ${v.consistent ? 'hold' : 'BROKEN'}`);
    return passed(v) ? 0 : 1;
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
