/**
 * npm run test:faults:failover — a Redis Cluster failover in the middle of a sale. One web
 * instance and one worker run against a fresh local 3 + 3 cluster (scripts/redis-cluster.sh) and
 * private MariaDB / RabbitMQ; an open-loop grab storm runs while the master that owns the
 * voucher's slot is SIGKILLed and its replica takes over. Replication is asynchronous, so the new
 * master may not know grabs the old one had already accepted: we count them ("forgotten"), then
 * require 0 oversold, 0 duplicates, every accepted grab persisted or dead-lettered and shown to its
 * buyer as `created` or `failed`, and every invariant again after the worker's own repair
 * (lib/seckill/repair.ts) within a bound — the test repairs nothing.
 *
 * On loopback the replica is never behind, so by default (`--lag cut`) we make it so first, as a
 * partition would: SIGSTOP the replica, cut the master's replication link (CLIENT KILL TYPE
 * replica; the stopped replica cannot reconnect), let the master accept grabs for LAG_MS alone,
 * SIGKILL it, SIGCONT the replica, which is promoted after the node timeout without those grabs.
 * `--lag stop` only SIGSTOPs the replica (the backed-up stream sits in the kernel's socket buffers
 * and still reaches it), `--lag none` is the plain kill.
 *
 *   npx tsx e2e/faults/failover.ts [--wait-ms 50] [--rate 60] [--lag cut|stop|none] [--buckets 3] [--ci]
 *   FAULT_PORT_BASE=3650 REDIS_CLUSTER_BASE_PORT=7100 …   private ports (e2e/faults/procs.ts faultPorts)
 */
import { execFileSync } from 'node:child_process';
import type { Cluster as RedisCluster } from 'ioredis';
import { PrivateMariaDb, PrivateRabbit } from './private-services';
import { faultPorts, runToExit, sleep, waitFor } from './procs';
import { Cluster as Services } from './cluster';
import { Storm } from './storm';
import { countForgotten, createSale, passed, settle, snapshotBuyers, visibility } from './sale';
import { faultEnv, openStores } from './env';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const WAIT_MS = arg('wait-ms', 0);
const RATE = arg('rate', process.argv.includes('--ci') ? 40 : 80);
const LAG = (() => {
  const i = process.argv.indexOf('--lag');
  const v = i > 0 ? process.argv[i + 1] : 'cut';
  if (v !== 'cut' && v !== 'stop' && v !== 'none') throw new Error('--lag cut|stop|none');
  return v;
})();
const LAG_MS = arg('lag-ms', 1500);
// --buckets N: the sale spread over N stock buckets (docs/buckets.md); the master killed is bucket 1's.
const BUCKETS = arg('buckets', 1);
const BEFORE_MS = 4000;
const AFTER_MS = 8000;
const USERS = Math.ceil((RATE * (BEFORE_MS + AFTER_MS + 4000)) / 1000 / 2);

const ports = faultPorts(0, { mysql: 3483, redis: 0, rabbit: 5683, webs: [3141] });
const WEB = ports.webs[0]!;
const mysql = new PrivateMariaDb(ports.mysql);
const rabbit = new PrivateRabbit(ports.rabbit, ports.rabbitDist);
const cluster = (...args: string[]) => execFileSync('bash', ['scripts/redis-cluster.sh', ...args], { encoding: 'utf8' });
const log = (msg: string) => console.log(`[failover ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  log(`fresh Redis Cluster, private MariaDB and RabbitMQ; ${BUCKETS} stock bucket(s); rate ${RATE}/s, WAIT ${WAIT_MS ? `1 ${WAIT_MS}` : 'off'}, replica lag: ${LAG}${LAG === 'none' ? '' : ` ${LAG_MS} ms`}`);
  cluster('stop');
  const nodes = cluster('start').trim().split('\n').pop()!;
  await Promise.all([mysql.start(), rabbit.start()]);
  const env = faultEnv({ mysql: mysql.url, redisCluster: nodes, rabbit: rabbit.url }, 'hmdp_failover', {
    SECKILL_REPLICA_WAIT_MS: String(WAIT_MS),
    // The worker's repair starts 1.5 s after it notices the failover (production: at once), only so
    // this test can first read which accepted grabs the new master forgot.
    REDIS_REPAIR_DELAYS_MS: '1500,6000,30000',
  });
  const { db, redis } = await openStores<RedisCluster>(env);
  const { keys } = await import('@/lib/redis/keys');
  const { slotOf } = await import('@/lib/redis/slots');

  const { bucketTag } = await import('@/lib/seckill/buckets/tags');
  const { voucherId, users } = await createSale(db, redis, USERS, '167', BUCKETS);
  // The killed master owns this tag's slot: the voucher's own, or with buckets, bucket 1's.
  const victimTag = BUCKETS > 1 ? bucketTag(voucherId, 1, BUCKETS) : voucherId;

  const services = new Services(env, [WEB], 1);
  await services.start();
  const storm = new Storm(() => [services.url(WEB)], users, voucherId, RATE);

  // The master that owns the voucher's slot, and its pid.
  const ranges = (await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
  const slot = slotOf(keys.seckillStock(victimTag));
  const owner = ranges.find(([a, b]) => slot >= a && slot <= b)![2] as unknown as [string, number, string];
  const victim = owner[1];
  const pidOf = (port: number) => Number(/process_id:(\d+)/.exec(execFileSync('redis-cli', ['-p', String(port), 'info', 'server'], { encoding: 'utf8' }))![1]);
  const pid = pidOf(victim);
  // Its replica: the CLUSTER NODES line "id host:port@bus slave <master id> …".
  const replicaLine = execFileSync('redis-cli', ['-p', String(victim), 'cluster', 'nodes'], { encoding: 'utf8' }).split('\n').find((l) => l.split(' ')[3] === owner[2])!;
  const replica = Number(/:(\d+)@/.exec(replicaLine)![1]);
  const replicaPid = pidOf(replica);

  try {
    storm.run('before');
    let lagged = 0;
    if (LAG === 'none') await sleep(BEFORE_MS);
    else {
      await sleep(BEFORE_MS - LAG_MS);
      process.kill(replicaPid, 'SIGSTOP');
      if (LAG === 'cut') execFileSync('redis-cli', ['-p', String(victim), 'client', 'kill', 'type', 'replica']);
      const at = storm.accepted.size;
      await sleep(LAG_MS);
      lagged = storm.accepted.size - at;
    }
    const acceptedBefore = storm.accepted.size;
    process.kill(pid, 'SIGKILL');
    if (LAG !== 'none') process.kill(replicaPid, 'SIGCONT');
    log(`SIGKILL master :${victim} (pid ${pid}, owns slot ${slot}) after ${acceptedBefore} accepted grabs${LAG === 'none' ? '' : `, ${lagged} of them while its replica :${replica} was stopped${LAG === 'cut' ? ' and cut off' : ''}`}`);
    storm.phase = 'after';
    // The first grab accepted after the kill marks the replica's takeover as the grab path sees it.
    const killedAt = Date.now();
    const tookOver = () => [...storm.accepted.values()].some((v) => v.phase === 'after');
    // The new master serves the voucher's slot (or a grab was accepted there): read what it knows
    // at once, before the worker's repair (which waits 1.5 s after noticing).
    // A command to the dead master times out (REDIS_COMMAND_TIMEOUT_MS) until the cluster moves
    // the slot: that is "not yet", not a failure of the run.
    // Bucketed, the other buckets' masters accept grabs all along: only the victim bucket's key tells.
    await waitFor('the new master', async () => (BUCKETS === 1 && tookOver()) || (await redis.exists(keys.seckillStock(victimTag)).catch(() => 0)) === 1, 30_000, 50);
    const known = await snapshotBuyers(redis, voucherId, BUCKETS);
    // When the grab path sees it: with WAIT a promoted master has no replica, every WAIT runs to
    // its timeout and the storm can starve, so this one is measured, not required.
    const tookOverMs = await waitFor('a grab accepted by the new master', async () => tookOver(), AFTER_MS, 50).then(() => Date.now() - killedAt, () => NaN);
    log(Number.isNaN(tookOverMs) ? `no grab accepted within ${AFTER_MS / 1000} s of the kill` : `the new master accepted a grab ${(tookOverMs / 1000).toFixed(1)} s after the kill`);
    await sleep(AFTER_MS);
    // Bounded: a request the failover left hanging must not hang the suite (each has a 5 s timeout).
    await Promise.race([storm.drain(), sleep(15_000)]);
    log(`storm over: ${storm.answers.length} accepted`);

    // Before any repair, what did the new master forget?
    const { notKnown, twice } = countForgotten(known, storm, (p) => p === 'before');
    const v = await settle(db, redis, voucherId, storm, services.url(WEB));
    console.log(`\n| WAIT | replica lag | accepted | accepted before the kill (while lagging) | forgotten by the failover (not a buyer / accepted twice) | persisted | failed (dead letter) | silently lost | takeover seen by grabs | invariants again (worker's repair) |`);
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${WAIT_MS ? `1 ${WAIT_MS} ms` : 'off'} | ${LAG === 'none' ? 'none' : `${LAG} ${LAG_MS} ms`} | ${v.accepted} | ${acceptedBefore} (${lagged}) | ${notKnown + twice} (${notKnown} / ${twice}) | ${v.persisted} | ${v.failed} | ${v.silent} | ${Number.isNaN(tookOverMs) ? 'none' : `${(tookOverMs / 1000).toFixed(1)} s`} | ${v.consistent ? `${v.repairedAfterS.toFixed(1)} s after the storm` : 'NOT within the bound'} |`);
    console.log(`\nforgotten ${notKnown + twice}`);
    console.log(`requests ${storm.sent}: ${[...storm.statuses].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    console.log(`after the worker's repair: ${v.summary}`);
    console.log(visibility(v));
    console.log(`oversold ${v.oversold} · duplicates ${v.duplicates} · silently lost ${v.silent} · invariants ${v.consistent ? 'hold' : 'BROKEN'}`);
    return passed(v) ? 0 : 1;
  } finally {
    storm.pause();
    await services.stop();
    redis.disconnect();
    await db.destroy();
  }
}

runToExit(main, async () => {
  await Promise.allSettled([mysql.stop(), rabbit.stop()]);
  cluster('stop');
});
