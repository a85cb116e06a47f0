/**
 * Every page a consumer or a merchant sees passes axe-core's WCAG 2 A/AA rules (colour contrast
 * included) in the real browser against the production build: the shop at phone size, the console
 * at desktop size, logged out and logged in, with the demo data.
 */
import { devices, expect, test, type Page } from '@playwright/test';
import { createConnection } from 'mysql2/promise';
import { wcagViolations } from './support/axe';
import { loginByPassword, loginBySms } from './support/login';

const MERCHANT = { phone: '13800000001', password: 'merchant123' };

async function firstId(query: string): Promise<string> {
  const conn = await createConnection({ uri: process.env.DATABASE_URL!, timezone: 'Z' });
  try {
    const [rows] = await conn.query(query);
    const row = (rows as { id: number }[])[0];
    if (!row) throw new Error(`no row for: ${query}`);
    return String(row.id);
  } finally {
    await conn.end();
  }
}

/** Opens the path, waits until the page has settled and checks it. */
async function expectAccessible(page: Page, path: string, ready?: string): Promise<void> {
  const res = await page.goto(path);
  expect(res?.status(), path).toBeLessThan(400);
  if (ready) await expect(page.getByTestId(ready).first()).toBeVisible();
  // Settled: no request for half a second. Pages that poll or stream (the live stock page) never
  // are; for them a few seconds is enough for the first data to be on screen.
  await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => undefined);
  // A page that moves on by itself (the console's /admin goes to its first section) is checked
  // where it lands.
  let violations: string[] | undefined;
  for (let attempt = 0; violations === undefined; attempt++) {
    try {
      violations = await wcagViolations(page);
    } catch (err) {
      if (attempt >= 2 || !/context was destroyed/.test(String(err))) throw err;
      await page.waitForLoadState('load');
    }
  }
  expect.soft(violations, `${path} (at ${new URL(page.url()).pathname})`).toEqual([]);
}

// Many pages per test, each settled and scanned: longer than the suite's 60 s on a loaded machine.
test.describe.configure({ timeout: 240_000 });

test('the shop pages (phone size) pass WCAG 2 AA', async ({ page }) => {
  const shopId = await firstId("SELECT s.id FROM tb_shop s JOIN tb_voucher v ON v.shop_id = s.id WHERE s.name = '103茶餐厅' LIMIT 1");
  await expectAccessible(page, '/', 'type-link');
  await expectAccessible(page, `/types/${await firstId('SELECT type_id AS id FROM tb_shop WHERE id = ' + Number(shopId))}`, 'shop-card');
  await expectAccessible(page, `/shops/${shopId}`, 'voucher');
  await expectAccessible(page, '/blogs');
  const blogId = await firstId('SELECT id FROM tb_blog ORDER BY id LIMIT 1');
  await expectAccessible(page, `/blogs/${blogId}`);
  await expectAccessible(page, `/users/${await firstId(`SELECT user_id AS id FROM tb_blog WHERE id = ${blogId}`)}`);
  await expectAccessible(page, '/login', 'login-phone');
  await loginBySms(page);
  await expectAccessible(page, '/me');
  await expectAccessible(page, '/orders');
  await expectAccessible(page, '/feed');
  await expectAccessible(page, '/blogs/new');
  await expectAccessible(page, `/shops/${shopId}`, 'seckill-grab');
});

// The desktop device without its browser type (which cannot change inside a file).
const { defaultBrowserType: _browser, ...desktop } = devices['Desktop Chrome'];

test.describe('the console (desktop)', () => {
  test.use(desktop);

  test('the merchant console passes WCAG 2 AA', async ({ page }) => {
    const voucherId = await firstId('SELECT v.id FROM tb_voucher v JOIN tb_seckill_voucher s ON s.voucher_id = v.id JOIN tb_shop p ON p.id = v.shop_id JOIN tb_user u ON u.id = p.owner_id WHERE u.phone = \'13800000001\' ORDER BY v.id LIMIT 1');
    await loginByPassword(page, MERCHANT.phone, MERCHANT.password);
    // The login form's own navigation to the console must finish before the next page.goto.
    await expect(page.getByTestId('admin-to-site')).toBeVisible();
    await page.waitForLoadState('networkidle');
    for (const path of ['/admin', '/admin/vouchers', '/admin/vouchers/new', `/admin/vouchers/${voucherId}`, `/admin/vouchers/${voucherId}/live`, `/admin/vouchers/${voucherId}/orders`, '/admin/shops', '/admin/redeem', '/admin/payments', '/admin/dead-letters', '/admin/traffic', '/admin/audit', '/admin/users']) {
      await expectAccessible(page, path);
    }
  });
});
