/**
 * Redis really down: a second production server of our own talks to a redis-server of our own,
 * which we SIGKILL. The shop pages must keep rendering from the database (lib/cache fallback).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';
import { startRedisServer, type RedisServer } from './support/redis-server';

const root = fileURLToPath(new URL('..', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} did not answer in ${timeoutMs} ms`);
}

let redisServer: RedisServer;
let web: ChildProcess;
let base = '';

test.beforeAll(async () => {
  test.setTimeout(120_000);
  redisServer = await startRedisServer();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  web = spawn(process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), REDIS_URL: redisServer.url, LOG_LEVEL: 'error' },
    stdio: 'ignore',
    detached: true,
  });
  await waitFor(`${base}/api/shop-types`, 90_000);
});

test.afterAll(async () => {
  try {
    process.kill(-web.pid!, 'SIGTERM');
  } catch {
    /* already gone */
  }
  await redisServer?.kill();
});

test('Redis killed: home, type list and shop detail still render from the database', async ({ page }) => {
  // Warm the throwaway cache first, as a running site would have.
  const types = (await (await fetch(`${base}/api/shop-types`)).json()).data as { id: string }[];
  const list = (await (await fetch(`${base}/api/shops?typeId=${types[0]!.id}`)).json()).data.items as { id: string; name: string }[];
  const shop = list[0]!;
  expect((await fetch(`${base}/shops/${shop.id}`)).status).toBe(200);

  await redisServer.kill();

  const res = await page.goto(`${base}/shops/${shop.id}`);
  expect(res?.status()).toBe(200);
  await expect(page.getByTestId('shop-name')).toHaveText(shop.name);
  await expect(page.getByTestId('shop-price')).toBeVisible();

  await page.goto(`${base}/`);
  await expect(page.getByTestId('type-link')).toHaveCount(types.length);
  await expect(page.getByTestId('shop-card').first()).toBeVisible();
  await page.getByTestId('type-link').first().click();
  await expect(page.getByTestId('shop-card').first()).toBeVisible();
  await expect(page.getByTestId('shop-list-error')).toHaveCount(0);
});
