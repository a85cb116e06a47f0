/**
 * The waitlist for returned units in a browser at phone size (docs/fair-sale.md#waitlist), against
 * the production build, the real worker, MySQL, Redis and RabbitMQ:
 *   A buys the last unit → B sees 已售罄 and 加入候补 → 候补中 · 第 1 位 → A cancels on the order
 *   page → B's page shows the offer with a countdown → 立即购买 → B's order is created (待支付).
 */
import { devices, expect, test, type Page } from '@playwright/test';
import { journeyData } from './support/journey-data';
import { loginByPassword, loginBySms } from './support/login';
import { look } from './support/look';
import { expectOrderListed } from './support/orders';

const SHOP = '103茶餐厅'; // seeded, owned by the first demo merchant
const MERCHANT = { phone: '13800000001', password: 'merchant123' };
const SHOTS = process.env.E2E_SCREENSHOTS;

const f = journeyData(SHOP);

/** The voucher card alone, where the waitlist lives (a full shop page is long and its header sticky). */
const cardShot = async (page: Page, title: string, name: string) => {
  if (SHOTS) await page.getByTestId('voucher').filter({ hasText: title }).screenshot({ path: `${SHOTS}/${name}-card.png` });
};

const grabBox = (page: Page, title: string) => page.getByTestId('voucher').filter({ hasText: title }).getByTestId('seckill-grab');

test('A buys the last unit, B joins the waitlist, A cancels, B gets the offer and buys it', async ({ page, browser }) => {
  const v = await f.data.voucher({ stock: 1, label: '候补' });

  // A takes the only unit.
  await loginBySms(page, undefined, '/');
  await page.goto(`/shops/${f.shopId}`);
  const aBox = grabBox(page, v.title);
  await aBox.getByTestId('seckill-button').click();
  await expect(aBox.getByTestId('seckill-result')).toHaveAttribute('data-state', 'created', { timeout: 15_000 });

  // B, on another phone, finds it sold out and joins the waitlist.
  const bContext = await browser.newContext({ ...devices['Pixel 7'], locale: 'zh-CN', timezoneId: 'Asia/Shanghai' });
  const b = await bContext.newPage();
  await loginBySms(b, undefined, '/');
  await b.goto(`/shops/${f.shopId}`);
  const bBox = grabBox(b, v.title);
  // The page already knows the stock is gone: the grab button is shut, the waitlist offered.
  await expect(bBox.getByTestId('seckill-button')).toHaveText('已售罄');
  await expect(bBox.getByTestId('waitlist-join')).toBeVisible();
  await bBox.scrollIntoViewIfNeeded();
  await look(b, 'waitlist-sold-out');
  await cardShot(b, v.title, 'waitlist-sold-out');
  await bBox.getByTestId('waitlist-join').click();
  await expect(bBox.getByTestId('waitlist-position')).toContainText('第 1 位');
  await look(b, 'waitlist-waiting');
  await cardShot(b, v.title, 'waitlist-waiting');

  // A cancels the order on the order page.
  await page.goto('/orders');
  const item = page.getByTestId('order-item').filter({ hasText: v.title });
  await item.getByTestId('order-cancel').click();
  await expect(item.getByTestId('order-status')).toHaveText('已取消');

  // B's page hears about the offer by itself (it polls while waiting), with a countdown.
  await expect(bBox.getByTestId('waitlist-offer')).toBeVisible({ timeout: 10_000 });
  await expect(bBox.getByTestId('waitlist-countdown')).toHaveText(/^0[0-2]:\d\d$/);
  await look(b, 'waitlist-offer');
  await cardShot(b, v.title, 'waitlist-offer');
  await bBox.getByTestId('waitlist-claim').click();
  await expect(bBox.getByTestId('waitlist-bought')).toBeVisible();
  await bBox.getByTestId('waitlist-order-link').click();
  await expect(b).toHaveURL(/\/orders/);
  await expectOrderListed(b, v.title, '待支付');
  await look(b, 'waitlist-order');
  await bContext.close();

  // The merchant's live page shows the sale's waitlist numbers, and the badge counts the offer's unit.
  const merchant = await browser.newContext({ viewport: { width: 1280, height: 900 }, isMobile: false, hasTouch: false });
  const console_ = await merchant.newPage();
  await loginByPassword(console_, MERCHANT.phone, MERCHANT.password, `/admin/vouchers/${v.id}/live`);
  await expect(console_.getByTestId('live-conn')).toHaveAttribute('data-conn', 'open');
  await expect(console_.getByTestId('live-offers-claimed')).toHaveText('1');
  await expect(console_.getByTestId('live-offers-open')).toHaveText('0');
  await expect(console_.getByTestId('live-waiting')).toHaveText('0');
  await expect(console_.getByTestId('live-grabs-accepted')).toHaveText('1');
  await expect(console_.getByTestId('live-badge')).toHaveAttribute('data-status', 'consistent', { timeout: 15_000 });
  await look(console_, 'waitlist-console-live');
  await merchant.close();
});
