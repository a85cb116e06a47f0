/**
 * Browsing shops in a real browser against the production build: home → type → shop detail,
 * nearest-first with a shared location, live seckill stock by polling, and real 404 pages.
 */
import { expect, test } from '@playwright/test';
import Redis from 'ioredis';
import { createConnection, type Connection, type ResultSetHeader } from 'mysql2/promise';

test('home → type → shop detail, with vouchers and a seckill box', async ({ page }) => {
  await page.goto('/');
  const firstType = page.getByTestId('type-link').first();
  await expect(page.getByTestId('type-link')).toHaveCount(8);
  const typeName = (await firstType.innerText()).trim();
  // The list under the grid loads on its own (first type's tab).
  await expect(page.getByTestId('shop-list').getByTestId('shop-card').first()).toBeVisible();

  await firstType.click();
  await expect(page).toHaveURL(/\/types\/\d+$/);
  await expect(page.getByTestId('type-title')).toHaveText(typeName);
  const cards = page.getByTestId('shop-card');
  await expect(cards.first()).toBeVisible();
  expect(await cards.count()).toBeGreaterThanOrEqual(5);

  const card = cards.filter({ hasText: '103茶餐厅' });
  await card.click();
  await expect(page).toHaveURL(/\/shops\/\d+$/);
  await expect(page.getByTestId('shop-name')).toHaveText('103茶餐厅');
  await expect(page.getByTestId('shop-price')).toContainText(/¥\d+/);
  await expect(page.getByTestId('shop-hours')).toHaveText(/\d\d:\d\d-\d\d:\d\d/);
  await expect(page.getByTestId('shop-images').locator('img').first()).toBeVisible();
  // The seed gives it one normal and two seckill vouchers (other specs may add more).
  await expect(page.getByTestId('voucher').first()).toBeVisible();
  expect(await page.getByTestId('voucher').count()).toBeGreaterThanOrEqual(3);
  expect(await page.getByTestId('seckill-grab').count()).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId('seckill-remaining').first()).toContainText(/剩余 \d+ 张/);
  await expect(page.getByTestId('seckill-window').first()).toContainText('开抢');
});

test('with the location shared, the list is nearest first and shows distances', async ({ browser }) => {
  // Standing on West Lake's east shore.
  const context = await browser.newContext({ geolocation: { longitude: 120.165, latitude: 30.258 }, permissions: ['geolocation'], locale: 'zh-CN' });
  const page = await context.newPage();
  await page.goto('/');
  await page.getByTestId('type-link').first().click();
  const list = page.getByTestId('shop-list');
  await expect(list).toHaveAttribute('data-sorted', 'distance');
  const distances = page.getByTestId('shop-card-distance');
  await expect(distances.first()).toBeVisible();
  // The list may re-render once more as the position arrives: read it once it has settled.
  const read = async () => (await distances.allInnerTexts()).map((t) => (t.endsWith('km') ? parseFloat(t) * 1000 : parseFloat(t)));
  await expect.poll(async () => (await read()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
  const metres = await read();
  expect([...metres].sort((a, b) => a - b)).toEqual(metres);
  await context.close();
});

test('missing or junk shop ids are real 404 pages', async ({ page }) => {
  for (const path of ['/shops/987654321', '/shops/abc', '/shops/1%20OR%201=1', '/types/987654321']) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByTestId('not-found')).toBeVisible();
  }
});

test.describe('live stock', () => {
  let mysql: Connection;
  let redis: Redis;
  let shopId = '';
  let voucherId = '';

  test.beforeAll(async () => {
    mysql = await createConnection({ uri: process.env.DATABASE_URL!, timezone: 'Z' });
    redis = new Redis(process.env.REDIS_URL!);
    const [type] = (await mysql.query('SELECT id FROM tb_shop_type ORDER BY sort LIMIT 1')) as unknown as [{ id: string }[]];
    const [shop] = await mysql.execute<ResultSetHeader>(
      'INSERT INTO tb_shop (name, type_id, images, area, address, x, y, avg_price, open_hours) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [`e2e库存测试店-${Date.now()}`, type[0]!.id, '/shops/2.svg', '湖滨', '湖滨1号', 120.16, 30.25, 6600, '10:00-22:00'],
    );
    shopId = String(shop.insertId);
    const [v] = await mysql.execute<ResultSetHeader>('INSERT INTO tb_voucher (shop_id, title, pay_value, actual_value, type) VALUES (?, ?, ?, ?, 1)', [shopId, 'e2e秒杀券', 990, 5000]);
    voucherId = String(v.insertId);
    const begin = new Date(Date.now() - 3600_000);
    const end = new Date(Date.now() + 3600_000);
    await mysql.execute('INSERT INTO tb_seckill_voucher (voucher_id, initial_stock, stock, begin_time, end_time) VALUES (?, 10, 10, ?, ?)', [voucherId, begin, end]);
  });

  test.afterAll(async () => {
    await mysql.execute('DELETE FROM tb_seckill_voucher WHERE voucher_id = ?', [voucherId]);
    await mysql.execute('DELETE FROM tb_voucher WHERE id = ?', [voucherId]);
    await mysql.execute('DELETE FROM tb_shop WHERE id = ?', [shopId]);
    await mysql.end();
    await redis.del(`seckill:{${voucherId}}:meta`, `seckill:{${voucherId}}:stock`, `cache:shop:{${shopId}}`, `cache:shop-vouchers:{${shopId}}`);
    redis.disconnect();
  });

  test('the remaining stock follows Redis by polling', async ({ page }) => {
    await page.goto(`/shops/${shopId}`);
    await expect(page.getByTestId('seckill-remaining')).toHaveText('剩余 10 张'); // DB stock: not preheated
    // What preheat writes, then sales happen.
    await redis.hset(`seckill:{${voucherId}}:meta`, { initial: 10, begin: Date.now() - 3600_000, end: Date.now() + 3600_000 });
    await redis.set(`seckill:{${voucherId}}:stock`, 7);
    await expect(page.getByTestId('seckill-remaining')).toHaveText('剩余 7 张', { timeout: 8000 });
    await redis.set(`seckill:{${voucherId}}:stock`, 3);
    await expect(page.getByTestId('seckill-remaining')).toHaveText('剩余 3 张', { timeout: 8000 });
  });
});
