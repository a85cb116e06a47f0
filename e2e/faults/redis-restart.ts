/**
 * npm run test:faults:restart — what one Redis forgets when it is SIGKILLed and restarted mid-sale,
 * under AOF fsync always, AOF everysec and no persistence at all (a default redis-server). One
 * web instance and one worker on private MariaDB, RabbitMQ and Redis; per mode a fresh sale, an
 * open-loop grab storm, a SIGKILL, a restart from whatever the server persisted. Reports how many
 * grabs answered 200 the restart forgot, and requires for every mode: 0 oversold, 0 duplicates,
 * every 200 persisted or dead-lettered and shown to its buyer as created / failed, the invariants
 * again after the worker's own repair (lib/seckill/repair.ts) within a bound — the test repairs nothing.
 *
 *   npx tsx e2e/faults/redis-restart.ts [--rate 80] [--modes always,everysec,off]
 *   FAULT_PORT_BASE=3650 …   private ports (e2e/faults/procs.ts faultPorts)
 */
import { PrivateMariaDb, PrivateRabbit, PrivateRedis } from './private-services';
import { faultPorts, runToExit, sleep, waitFor } from './procs';
import { Cluster as Services } from './cluster';
import { Storm } from './storm';
import { countForgotten, createSale, passed, settle, snapshotBuyers, visibility, type Verdict } from './sale';
import { faultEnv, openStores } from './env';

const argOf = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RATE = Number(argOf('rate') ?? 80);
const MODES = (argOf('modes') ?? 'always,everysec,off').split(',') as ('always' | 'everysec' | 'off')[];
const STORM_MS = 4000;
const USERS = Math.ceil((RATE * (STORM_MS + 3000)) / 1000 / 2);
const ports = faultPorts(10, { mysql: 3483, redis: 6483, rabbit: 5683, webs: [3142] });
const REDIS_PORT = ports.redis;
const WEB = ports.webs[0]!;

const mysql = new PrivateMariaDb(ports.mysql);
const rabbit = new PrivateRabbit(ports.rabbit, ports.rabbitDist);
let redisSrv = new PrivateRedis(REDIS_PORT, MODES[0]);
const log = (msg: string) => console.log(`[restart ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  await Promise.all([mysql.start(), rabbit.start(), redisSrv.start()]);
  const env = faultEnv({ mysql: mysql.url, redis: redisSrv.url, rabbit: rabbit.url }, 'hmdp_restart', {
    // The worker's repair starts 1.5 s after it notices the restart (production: at once), only so
    // this test can first read which accepted grabs the restarted Redis forgot.
    REDIS_REPAIR_DELAYS_MS: '1500,6000,30000',
  });
  const { db, redis } = await openStores(env);
  const services = new Services(env, [WEB], 1);
  await services.start();

  const rows: { mode: string; before: number; forgotten: number; v: Verdict }[] = [];
  try {
    for (const [i, mode] of MODES.entries()) {
      if (i > 0) {
        await redisSrv.crash();
        redisSrv = new PrivateRedis(REDIS_PORT, mode); // a fresh data dir with this mode
        await redisSrv.start();
      }
      const { voucherId, users } = await createSale(db, redis, USERS, `16${5 + i}`);
      const storm = new Storm(() => [services.url(WEB)], users, voucherId, RATE);
      storm.run(mode);
      await sleep(STORM_MS);
      await redisSrv.crash();
      storm.pause();
      const before = storm.answers.length;
      log(`${mode}: SIGKILL Redis after ${before} grabs answered 200; restarting from what it persisted`);
      await redisSrv.start();
      await waitFor('Redis answers again', async () => (await redis.ping()) === 'PONG', 30_000, 20);
      const known = await snapshotBuyers(redis, voucherId); // before the worker's repair
      await Promise.race([storm.drain(), sleep(10_000)]);
      const { notKnown, twice } = countForgotten(known, storm, () => true);
      const v = await settle(db, redis, voucherId, storm, services.url(WEB));
      rows.push({ mode, before, forgotten: notKnown + twice, v });
      log(`${mode}: forgotten ${notKnown + twice}, ${v.summary}; ${visibility(v)}`);
    }
    console.log('\n| Redis persistence | grabs answered 200 | forgotten by the restart | persisted | dead-lettered (failed) | silently lost | oversold | duplicates | invariants again (worker’s repair) | buyers see created / failed / not visible |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---|');
    for (const { mode, forgotten, v } of rows) {
      console.log(`| ${mode === 'off' ? 'none' : `AOF ${mode}`} | ${v.accepted} | ${forgotten} | ${v.persisted} | ${v.failed} | ${v.silent} | ${v.oversold} | ${v.duplicates} | ${v.consistent ? `${v.repairedAfterS.toFixed(1)} s after the storm` : 'NOT within the bound'} | ${v.created} / ${v.failedSeen} / ${v.accepted - v.created - v.failedSeen} |`);
    }
    return rows.every((r) => passed(r.v)) ? 0 : 1;
  } finally {
    await services.stop();
    redis.disconnect();
    await db.destroy();
  }
}

runToExit(main, () => Promise.allSettled([mysql.stop(), rabbit.stop(), redisSrv.stop()]));
