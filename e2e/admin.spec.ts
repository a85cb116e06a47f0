/**
 * The merchant console in a real browser (desktop viewport) against a production build, the real
 * worker, MySQL, Redis and RabbitMQ: a merchant creates a flash sale that starts now, a consumer in
 * a second browser context grabs it, and the live page follows without a reload until consistent.
 * Also: the role check on every console page, inline field errors, inert HTML in titles, dead
 * letters and the shop edit form.
 *
 * The consumer grabs with the page's own fetch (its session cookie); the shop page's grab box is
 * driven in e2e/journey.spec.ts.
 */
import { devices, expect, test, type Page } from '@playwright/test';
import { createConnection } from 'mysql2/promise';
import { loginByPassword, loginBySms } from './support/login';

test.use({ ...devices['Desktop Chrome'], defaultBrowserType: undefined });

const MERCHANT = { phone: '13800000001', password: 'merchant123' };
const OTHER_MERCHANT = { phone: '13800000002', password: 'merchant123' };

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL!, timezone: 'Z' });
  try {
    const [rows] = await conn.query(query, params);
    return rows as T[];
  } finally {
    await conn.end();
  }
}

async function insert(query: string, params: unknown[]): Promise<string> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL!, timezone: 'Z' });
  try {
    const [res] = await conn.query(query, params);
    return String((res as { insertId: number }).insertId);
  } finally {
    await conn.end();
  }
}

/** A shop of the first demo merchant and one of its flash-sale vouchers. */
async function merchantShopAndVoucher(): Promise<{ shopId: string; voucherId: string }> {
  const [row] = await sql<{ shopId: string; voucherId: string }>(
    `SELECT s.id AS shopId, v.id AS voucherId FROM tb_shop s JOIN tb_user u ON u.id = s.owner_id
     JOIN tb_voucher v ON v.shop_id = s.id WHERE u.phone = ? AND v.type = 1 ORDER BY s.id, v.id LIMIT 1`,
    [MERCHANT.phone],
  );
  return { shopId: String(row!.shopId), voucherId: String(row!.voucherId) };
}

/** Creates a voucher through the API with the merchant's browser session; returns its id. */
async function createVoucherAs(page: Page, body: Record<string, unknown>): Promise<string> {
  const r = await page.evaluate(async (b) => {
    const res = await fetch('/api/admin/vouchers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    return { status: res.status, json: await res.json() };
  }, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.data.id as string;
}

test('a merchant creates a sale that starts now; a consumer grabs; the live page follows without reload', async ({ page, browser }) => {
  await loginByPassword(page, MERCHANT.phone, MERCHANT.password, '/admin/vouchers/new');
  await expect(page).toHaveURL(/\/admin\/vouchers\/new$/);
  const title = `E2E 限时秒杀 ${Date.now()}`;
  await page.getByTestId('voucher-title').fill(title);
  await page.getByTestId('voucher-pay').fill('9.9');
  await page.getByTestId('voucher-actual').fill('50');
  await page.getByTestId('voucher-stock').fill('3');
  await page.getByTestId('voucher-begin-now').click();
  await page.getByTestId('voucher-submit').click();
  await page.waitForURL(/\/admin\/vouchers\/\d+$/);
  const voucherId = /\/admin\/vouchers\/(\d+)$/.exec(page.url())![1]!;
  await expect(page.getByTestId('voucher-detail-title')).toHaveText(title);
  await expect(page.getByTestId('voucher-detail-state')).toHaveText('进行中');
  await expect(page.getByTestId('voucher-detail-remaining')).toHaveText('3');
  // Yuan in the form, fen in the database.
  const [stored] = await sql<{ pay_value: string; actual_value: string }>('SELECT pay_value, actual_value FROM tb_voucher WHERE id = ?', [voucherId]);
  expect([Number(stored!.pay_value), Number(stored!.actual_value)]).toEqual([990, 5000]);

  await page.getByTestId('open-live').click();
  await expect(page).toHaveURL(new RegExp(`/admin/vouchers/${voucherId}/live$`));
  await expect(page.getByTestId('live-conn')).toHaveAttribute('data-conn', 'open');
  await expect(page.getByTestId('live-badge')).toHaveAttribute('data-status', 'consistent');
  await expect(page.getByTestId('live-buyers')).toHaveText('0');
  await expect(page.getByTestId('chart-empty')).toBeVisible();
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));

  const consumerContext = await browser.newContext();
  const consumer = await consumerContext.newPage();
  await loginBySms(consumer, undefined, '/');
  const grab = await consumer.evaluate(async (vid) => {
    const res = await fetch(`/api/seckill/${vid}`, { method: 'POST' });
    return { status: res.status, body: await res.json() };
  }, voucherId);
  expect(grab.status).toBe(200);
  expect(grab.body.data.status).toBe('pending');

  await expect(page.getByTestId('live-buyers')).toHaveText('1');
  await expect(page.getByTestId('live-redis-remaining')).toHaveText('2');
  await expect(page.getByTestId('live-db-orders')).toHaveText('1', { timeout: 15_000 });
  await expect(page.getByTestId('live-db-remaining')).toHaveText('2');
  await expect(page.getByTestId('live-pending')).toHaveText('0');
  await expect(page.getByTestId('live-badge')).toHaveAttribute('data-status', 'consistent');
  await expect(page.getByTestId('stock-chart')).toHaveAttribute('data-persisted', '1');
  // The numbers changed in the same document: no reload happened.
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
  await consumerContext.close();
});

test('every console page checks the role on the server', async ({ page, browser }) => {
  const { shopId, voucherId } = await merchantShopAndVoucher();
  const pages = ['/admin', '/admin/vouchers', '/admin/vouchers/new', `/admin/vouchers/${voucherId}`, `/admin/vouchers/${voucherId}/live`, '/admin/dead-letters', '/admin/shops', `/admin/shops/${shopId}`, '/admin/audit'];

  for (const path of pages) {
    await page.goto(path);
    await expect(page, `${path} without a session`).toHaveURL(`/login?next=${encodeURIComponent(path)}`);
  }

  await loginBySms(page, undefined, '/');
  for (const path of pages) {
    const res = await page.goto(path);
    expect(res?.status(), `${path} as a consumer`).toBe(403);
    await expect(page.getByTestId('forbidden'), `${path} as a consumer`).toBeVisible();
    await expect(page.getByTestId('admin-nav-vouchers')).toHaveCount(0);
  }

  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await loginByPassword(otherPage, OTHER_MERCHANT.phone, OTHER_MERCHANT.password, '/admin/vouchers');
  await expect(otherPage.getByTestId('voucher-table').or(otherPage.getByTestId('voucher-empty'))).toBeVisible();
  await expect(otherPage.getByTestId(`voucher-row-${voucherId}`)).toHaveCount(0);
  for (const path of [`/admin/vouchers/${voucherId}`, `/admin/vouchers/${voucherId}/live`, `/admin/shops/${shopId}`, `/admin/vouchers?shopId=${shopId}`]) {
    // The status is already streaming (200) when a page finds the voucher is not this merchant's;
    // the view is the 403 one and the API below it answers 403.
    await otherPage.goto(path);
    await expect(otherPage.getByTestId('forbidden'), `${path} as the other merchant`).toBeVisible();
  }
  await other.close();
});

test('bad input shows inline field errors; HTML in a title renders as text', async ({ page }) => {
  const { shopId } = await merchantShopAndVoucher();
  await loginByPassword(page, MERCHANT.phone, MERCHANT.password, '/admin/vouchers/new');
  await page.getByTestId('voucher-title').fill('时间填反了');
  await page.getByTestId('voucher-pay').fill('1.234');
  await page.getByTestId('voucher-actual').fill('50');
  await page.getByTestId('voucher-submit').click();
  await expect(page.getByTestId('field-error-payValue')).toContainText('两位小数');

  await page.getByTestId('voucher-pay').fill('10');
  await page.getByTestId('voucher-begin').fill('2030-06-02T10:00');
  await page.getByTestId('voucher-end').fill('2030-06-01T10:00');
  await page.getByTestId('voucher-submit').click();
  await expect(page.getByTestId('field-error-endTime')).toContainText('晚于开始时间');
  await page.getByTestId('voucher-stock').fill('2000000');
  await page.getByTestId('voucher-end').fill('2030-06-03T10:00');
  await page.getByTestId('voucher-submit').click();
  await expect(page.getByTestId('field-error-stock')).toContainText('不能超过');
  await expect(page).toHaveURL(/\/admin\/vouchers\/new$/);
  expect(await sql('SELECT id FROM tb_voucher WHERE title = ?', ['时间填反了'])).toHaveLength(0);

  const title = `<img src=x onerror=__x=1><script>__x=2</script>${String(Date.now()).slice(-6)}`;
  const id = await createVoucherAs(page, { shopId, title, payValue: 100, actualValue: 200, type: 0 });
  for (const path of [`/admin/vouchers/${id}`, `/admin/vouchers?shopId=${shopId}`, '/admin/audit']) {
    await page.goto(path);
    await expect(page.getByText(title).first()).toBeVisible();
  }
  await page.goto(`/admin/vouchers/${id}`);
  await expect(page.getByTestId('voucher-detail-title')).toHaveText(title);
  await expect(page.locator('img[src="x"]')).toHaveCount(0);
  expect(await page.evaluate(() => (window as unknown as { __x?: number }).__x)).toBeUndefined();
});

test('take down with confirmation; dead letters replay and discard with confirmation', async ({ page }) => {
  const { shopId } = await merchantShopAndVoucher();
  await loginByPassword(page, MERCHANT.phone, MERCHANT.password, '/admin/vouchers');
  const now = Date.now();
  const body = { shopId, title: `E2E 死信 ${now}`, payValue: 100, actualValue: 500, type: 1, stock: 5, beginTime: new Date(now - 60_000).toISOString(), endTime: new Date(now + 3_600_000).toISOString() };
  const voucherId = await createVoucherAs(page, body);

  const letters: string[] = [];
  for (let i = 0; i < 2; i++) {
    const orderId = String(8_000_000_000_000_000_000n + BigInt(now) * 10n + BigInt(i));
    const userId = String(7_000_000_000 + (now % 1_000_000) * 10 + i);
    const payload = JSON.stringify({ v: 1, orderId, userId, voucherId, at: now });
    letters.push(await insert("INSERT INTO tb_order_dead_letter (order_id, voucher_id, user_id, payload, reason, attempts) VALUES (?, ?, ?, ?, 'stock guard: e2e', 5)", [orderId, voucherId, userId, payload]));
  }
  const [replayId, discardId] = letters as [string, string];

  await page.goto('/admin/dead-letters');
  await expect(page.getByTestId(`dead-reason-${replayId}`)).toContainText('stock guard: e2e');
  await expect(page.getByTestId(`dead-attempts-${replayId}`)).toHaveText('5');

  await page.getByTestId(`dead-replay-${replayId}`).click();
  await expect(page.getByTestId(`dead-replay-${replayId}-dialog`)).toBeVisible();
  await page.getByTestId(`dead-replay-${replayId}-confirm`).click();
  await expect(page.getByTestId('dead-result')).toHaveText('已重放');
  await expect(page.getByTestId(`dead-row-${replayId}`)).toHaveCount(0);
  await expect.poll(async () => (await sql('SELECT id FROM tb_voucher_order WHERE voucher_id = ?', [voucherId])).length, { timeout: 15_000 }).toBe(1);

  await page.getByTestId(`dead-discard-${discardId}`).click();
  await page.getByTestId(`dead-discard-${discardId}-cancel`).click();
  await expect(page.getByTestId(`dead-row-${discardId}`)).toBeVisible();
  await page.getByTestId(`dead-discard-${discardId}`).click();
  await page.getByTestId(`dead-discard-${discardId}-confirm`).click();
  await expect(page.getByTestId('dead-result')).toHaveText('已丢弃');
  await page.goto('/admin/dead-letters?status=all');
  await expect(page.getByTestId(`dead-status-${replayId}`)).toHaveText('已重放');
  await expect(page.getByTestId(`dead-status-${discardId}`)).toHaveText('已丢弃');

  await page.goto(`/admin/vouchers/${voucherId}`);
  await page.getByTestId('action-take-down').click();
  await page.getByTestId('action-take-down-confirm').click();
  await expect(page.getByTestId('action-result')).toHaveText('已下架');
  await expect(page.getByTestId('voucher-detail-state')).toHaveText('已下架');
  await page.goto('/admin/audit');
  await expect(page.getByText('下架优惠券').first()).toBeVisible();
  await expect(page.getByText('重放死信').first()).toBeVisible();
});

test('shop edit goes through PUT /api/admin/shops/{id}', async ({ page }) => {
  const { shopId } = await merchantShopAndVoucher();
  const [before] = await sql<{ open_hours: string }>('SELECT open_hours FROM tb_shop WHERE id = ?', [shopId]);
  await loginByPassword(page, MERCHANT.phone, MERCHANT.password, '/admin/shops');
  await page.getByTestId(`shop-edit-${shopId}`).click();
  await expect(page.getByTestId('shop-openHours')).toHaveValue(before!.open_hours);

  await page.getByTestId('shop-openHours').fill('25:00-26:00');
  await page.getByTestId('shop-submit').click();
  await expect(page.getByTestId('field-error-openHours')).toBeVisible();

  const hours = before!.open_hours === '09:30-21:30' ? '10:00-22:00' : '09:30-21:30';
  await page.getByTestId('shop-openHours').fill(hours);
  await page.getByTestId('shop-submit').click();
  await expect(page.getByTestId('shop-result')).toHaveText('已保存');
  await page.reload();
  await expect(page.getByTestId('shop-openHours')).toHaveValue(hours);
  const [after] = await sql<{ open_hours: string }>('SELECT open_hours FROM tb_shop WHERE id = ?', [shopId]);
  expect(after!.open_hours).toBe(hours);
});
