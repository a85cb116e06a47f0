/**
 * Browser e2e against a production build (`next build` runs first in scripts/test.sh), the real
 * order worker, MySQL, Redis and RabbitMQ — in the test database / Redis db / queue prefix.
 * Uses Playwright's own Chromium when installed, else Debian's /usr/bin/chromium.
 */
import './support/setup-env';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, defineConfig, devices } from '@playwright/test';

const port = Number(process.env.E2E_PORT ?? 3100);
// The waiting room admits 3 tickets a second in the browser e2e, so e2e/room.spec.ts sees its place move.
process.env.ROOM_ADMIT_MAX_PER_SECOND ??= '3';
// The 9 people the room specs put ahead of the browser's user never buy: each admitted one holds
// the sale's one unit for a second (not the product's 20), then it moves on to the next place.
process.env.ROOM_HOLD_MS ??= '1000';
// Every unit spoken for (docs/fair-sale.md#every-unit-spoken-for) with a reserve of 10 past the
// stock: e2e/room-full.spec.ts shows 名额已满; the other room specs stay below it (9 ahead, one unit).
process.env.ROOM_RESERVE_MIN ??= '10';
const bundled = (() => {
  try {
    return chromium.executablePath();
  } catch {
    return '';
  }
})();
const executablePath = bundled && existsSync(bundled) ? undefined : '/usr/bin/chromium';

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../test-results',
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.CI ? [['list'], ['html', { open: 'never', outputFolder: '../playwright-report' }]] : 'list',
  globalSetup: './global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    ...devices['Pixel 7'],
    locale: 'zh-CN',
    timezoneId: 'Asia/Shanghai',
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
  webServer: {
    // The product's own web server (hot routes on bare node:http, the rest through Next).
    command: 'node --import tsx workers/web-server.ts',
    env: { ...(process.env as Record<string, string>), PORT: String(port) },
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
