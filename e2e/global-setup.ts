/**
 * Before the browser tests: migrate + seed the test database, take down the vouchers the other
 * suites left on its shops, drop the shop caches, reset the rate-limit counters in
 * the test Redis db (every browser login comes from 127.0.0.1, so runs within the hour would add
 * up against the per-IP SMS cap), and start a real order worker (stopped by the teardown).
 */
import './support/setup-env';
import { execSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import { createDb } from '../lib/db/client';
import { VoucherStatus } from '../lib/db/schema';

const root = fileURLToPath(new URL('..', import.meta.url));

export default async function globalSetup() {
  const dbName = new URL(process.env.DATABASE_URL!).pathname.slice(1);
  if (!/test/.test(dbName)) throw new Error(`Refusing to run e2e against database "${dbName}" (name must contain "test")`);
  execSync('npx tsx scripts/db-migrate.ts && npx tsx scripts/db-seed.ts', { stdio: 'inherit', env: process.env, cwd: root });
  // The integration suites put their vouchers (e2e/support/fixtures/seckill.ts createTestVoucher,
  // titled 测试秒杀券) on the first seeded shop, the one these tests open, and leave them on sale
  // for an hour: a few hundred per `npm test`, more with local runs on the same database. Each
  // live card on the page asks for its reservation view, and past a few hundred the page's own
  // requests met the per-client rate limit (429: cards without their room link or reservation box).
  const db = createDb(process.env.DATABASE_URL!);
  try {
    const r = await db.updateTable('tb_voucher').set({ status: VoucherStatus.TAKEN_DOWN }).where('title', 'like', '测试秒杀券 %').where('status', '=', VoucherStatus.ON_SALE).executeTakeFirst();
    console.log(`e2e setup: took down ${r.numUpdatedRows} vouchers left on sale by the integration suites`);
  } finally {
    await db.destroy();
  }
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    // Also the shop caches: the seed just rewrote the rows behind them (and other suites sharing
    // this Redis db may have cached a moment when the test database held no shop types at all).
    for (const pattern of ['rl:*', 'cache:*', 'geo:*']) {
      const stale = await redis.keys(pattern);
      for (const k of stale) await redis.del(k);
    }
  } finally {
    redis.disconnect();
  }
  const worker = spawn('npx', ['tsx', 'workers/background.ts'], { stdio: ['ignore', 'ignore', 'inherit'], env: process.env, cwd: root, detached: true });
  await new Promise((r) => setTimeout(r, 1500));
  if (worker.exitCode !== null) throw new Error(`order worker exited early with code ${worker.exitCode}`);
  return async () => {
    try {
      process.kill(-worker.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
  };
}
