/**
 * The flash sale in a browser: a consumer logs in by SMS, grabs a voucher from the page (the page's
 * own fetch drives the API with the browser's session cookie; the shop page's grab box is driven
 * in e2e/journey.spec.ts), the real worker writes the order, 我的订单 shows it.
 */
import { expect, test } from '@playwright/test';
import { createConnection } from 'mysql2/promise';
import { loginBySms } from './support/login';

async function createLiveVoucher(stock: number): Promise<string> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL!, timezone: 'Z' });
  try {
    const [shops] = await conn.query('SELECT id FROM tb_shop ORDER BY id LIMIT 1');
    const shopId = (shops as { id: string }[])[0]?.id ?? '1';
    const [res] = await conn.query(
      "INSERT INTO tb_voucher (shop_id, title, sub_title, pay_value, actual_value, type) VALUES (?, ?, '端到端测试', 990, 5000, 1)",
      [shopId, `E2E 秒杀券 ${Date.now()}`],
    );
    const id = String((res as { insertId: number }).insertId);
    const now = Date.now();
    await conn.query('INSERT INTO tb_seckill_voucher (voucher_id, initial_stock, stock, begin_time, end_time) VALUES (?, ?, ?, ?, ?)', [
      id,
      stock,
      stock,
      new Date(now - 60_000),
      new Date(now + 3_600_000),
    ]);
    return id;
  } finally {
    await conn.end();
  }
}

test('grab a voucher, see it pending then created, and find it in 我的订单', async ({ page }) => {
  // Never preheated on purpose: the first grab rebuilds Redis from MySQL.
  const voucherId = await createLiveVoucher(5);
  await loginBySms(page, undefined, '/orders');
  await expect(page).toHaveURL(/\/orders$/);
  await expect(page.getByTestId('orders-empty')).toBeVisible();

  const grab = () =>
    page.evaluate(async (vid) => {
      const res = await fetch(`/api/seckill/${vid}`, { method: 'POST' });
      return { status: res.status, body: await res.json() };
    }, voucherId);

  const first = await grab();
  expect(first.status).toBe(200);
  expect(first.body.data.status).toBe('pending');
  const orderId: string = first.body.data.orderId;

  const second = await grab();
  expect(second.status).toBe(409);
  expect(second.body.error.code).toBe('ALREADY_BOUGHT');

  await expect
    .poll(async () => page.evaluate(async (id) => (await (await fetch(`/api/orders/${id}`)).json()).data?.state, orderId), { timeout: 15_000 })
    .toBe('created');

  await page.getByTestId('nav-orders').click();
  await expect(page).toHaveURL(/\/orders$/);
  const item = page.locator(`[data-testid="order-item"][data-order-id="${orderId}"]`);
  await expect(item).toBeVisible();
  await expect(item.getByTestId('order-status')).toHaveAttribute('data-state', 'created');
  await expect(item.getByTestId('order-status')).toContainText('待支付');
  await expect(item.getByTestId('order-id')).toHaveText(orderId);
});

test('我的订单 needs a login, and an order is visible only to its owner', async ({ page, browser }) => {
  await page.goto('/orders');
  await expect(page).toHaveURL(/\/login\?next=%2Forders/);

  const voucherId = await createLiveVoucher(1);
  await loginBySms(page, undefined, '/orders');
  const orderId = await page.evaluate(async (vid) => (await (await fetch(`/api/seckill/${vid}`, { method: 'POST' })).json()).data.orderId as string, voucherId);

  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await loginBySms(otherPage, undefined, '/orders');
  const status = await otherPage.evaluate(async (id) => (await fetch(`/api/orders/${id}`)).status, orderId);
  expect(status).toBe(404);
  const soldOut = await otherPage.evaluate(async (vid) => (await (await fetch(`/api/seckill/${vid}`, { method: 'POST' })).json()).error.code, voucherId);
  expect(soldOut).toBe('SOLD_OUT');
  await other.close();
});
