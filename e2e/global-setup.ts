/**
 * Before the browser tests: migrate + seed the test database, drop the shop caches, reset the rate-limit counters in
 * the test Redis db (every browser login comes from 127.0.0.1, so runs within the hour would add
 * up against the per-IP SMS cap), and start a real order worker (stopped by the teardown).
 */
import './support/setup-env';
import { execSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';

const root = fileURLToPath(new URL('..', import.meta.url));

export default async function globalSetup() {
  const dbName = new URL(process.env.DATABASE_URL!).pathname.slice(1);
  if (!/test/.test(dbName)) throw new Error(`Refusing to run e2e against database "${dbName}" (name must contain "test")`);
  execSync('npx tsx scripts/db-migrate.ts && npx tsx scripts/db-seed.ts', { stdio: 'inherit', env: process.env, cwd: root });
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
