/**
 * npm run test:faults:restart — what one Redis forgets when it is SIGKILLed and restarted mid-sale,
 * under AOF fsync always, AOF everysec and no persistence at all (a default redis-server). One
 * web instance and one worker on private MariaDB, RabbitMQ and Redis; per mode a fresh sale, an
 * open-loop grab storm, a SIGKILL, a restart from whatever the server persisted. Reports how many
 * grabs answered 200 the restart forgot, and requires for every mode: 0 oversold, 0 duplicates,
 * every 200 persisted or dead-lettered, the invariants after the repair.
 *
 *   npx tsx e2e/faults/redis-restart.ts [--rate 80] [--modes always,everysec,off]
 */
import { PrivateMariaDb, PrivateRabbit, PrivateRedis } from './private-services';
import { sleep, waitFor } from './procs';
import { Cluster as Services } from './cluster';
import { Storm } from './storm';
import { countForgotten, createSale, passed, settle, type Verdict } from './sale';

const argOf = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RATE = Number(argOf('rate') ?? 80);
const MODES = (argOf('modes') ?? 'always,everysec,off').split(',') as ('always' | 'everysec' | 'off')[];
const STORM_MS = 4000;
const USERS = Math.ceil((RATE * (STORM_MS + 3000)) / 1000 / 2);
const REDIS_PORT = 6483;

const mysql = new PrivateMariaDb(3483);
const rabbit = new PrivateRabbit(5683, 25683);
let redisSrv = new PrivateRedis(REDIS_PORT, MODES[0]);
const log = (msg: string) => console.log(`[restart ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  await Promise.all([mysql.start(), rabbit.start(), redisSrv.start()]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: mysql.url,
    REDIS_URL: redisSrv.url,
    REDIS_CLUSTER_NODES: '',
    RABBITMQ_URL: rabbit.url,
    MQ_PREFIX: 'hmdp_restart',
    AUTH_SECRET: process.env.AUTH_SECRET ?? 'fault-suite-secret-0123456789abcdef0123456789',
    RATE_LIMITS: 'false',
    LOG_LEVEL: 'warn',
    OUTBOX_SWEEP_INTERVAL_MS: '1000',
    OUTBOX_STALE_MS: '3000',
  };
  Object.assign(process.env, env, { LOG_LEVEL: 'error' });
  const { createDb } = await import('@/lib/db/client');
  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { createRedis } = await import('@/lib/redis/client');
  const { seedDemo } = await import('@/lib/seed/seed');
  await ensureDatabase(mysql.url);
  const db = createDb(mysql.url, 5);
  await migrateToLatest(db);
  await seedDemo(db);
  const redis = createRedis(redisSrv.url);
  const services = new Services(env, [3142], 1);
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
      const storm = new Storm(() => [services.url(3142)], users, voucherId, RATE);
      storm.run(mode);
      await sleep(STORM_MS);
      await redisSrv.crash();
      storm.pause();
      const before = storm.answers.length;
      log(`${mode}: SIGKILL Redis after ${before} grabs answered 200; restarting from what it persisted`);
      await redisSrv.start();
      await Promise.race([storm.drain(), sleep(10_000)]);
      await waitFor('Redis answers again', async () => (await redis.ping()) === 'PONG', 30_000);
      const { notKnown, twice } = await countForgotten(redis, voucherId, storm);
      const v = await settle(db, redis, voucherId, storm);
      rows.push({ mode, before, forgotten: notKnown + twice, v });
      log(`${mode}: forgotten ${notKnown + twice}, ${v.summary}`);
    }
    console.log('\n| Redis persistence | grabs answered 200 | forgotten by the restart | persisted | dead-lettered (failed) | silently lost | oversold | duplicates | invariants after the repair |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
    for (const { mode, forgotten, v } of rows) {
      console.log(`| ${mode === 'off' ? 'none' : `AOF ${mode}`} | ${v.accepted} | ${forgotten} | ${v.persisted} | ${v.failed} | ${v.silent} | ${v.oversold} | ${v.duplicates} | ${v.consistent ? 'hold' : 'BROKEN'} |`);
    }
    return rows.every((r) => passed(r.v)) ? 0 : 1;
  } finally {
    await services.stop();
    redis.disconnect();
    await db.destroy();
  }
}

main()
  .then(async (code) => {
    await Promise.allSettled([mysql.stop(), rabbit.stop(), redisSrv.stop()]);
    process.exit(code);
  })
  .catch(async (e) => {
    console.error(e);
    await Promise.allSettled([mysql.stop(), rabbit.stop(), redisSrv.stop()]);
    process.exit(1);
  });
