/**
 * Before the browser tests: migrate + seed the test database, clear the test Redis db, and start
 * a real order worker (stopped again by the returned teardown).
 */
import '../lib/test/setup-env';
import { execSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export default async function globalSetup() {
  execSync('npx tsx scripts/db-migrate.ts && npx tsx scripts/db-seed.ts', { stdio: 'inherit', env: process.env, cwd: root });
  const worker = spawn('npx', ['tsx', 'workers/order-worker.ts'], { stdio: ['ignore', 'ignore', 'inherit'], env: process.env, cwd: root, detached: true });
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
