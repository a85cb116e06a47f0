/**
 * A reservation-only flash sale in a phone-sized browser, against the production build and the
 * real worker (docs/fair-sale.md#the-shop-page):
 *   立即预约 → 已预约 + the count → the sale starts, the draw runs → 已中签 → 立即抢购 → the order
 * and the merchant's console shows the reservations and the draw.
 */
import { expect, test } from '@playwright/test';
import { journeyData } from './support/journey-data';
import { loginByPassword, loginBySms } from './support/login';
import { look } from './support/look';

const SHOP = '103茶餐厅'; // seeded, owned by the first demo merchant
const MERCHANT = { phone: '13800000001', password: 'merchant123' };
const STARTS_IN_MS = 35_000;

const f = journeyData(SHOP);

test('预约抽签: reserve → 已预约 + count → the start → 已中签 → grab → order; the console shows the draw', async ({ page, browser }) => {
  test.setTimeout(150_000);
  const v = await f.data.voucher({ stock: 1, label: '预约', startsInMs: STARTS_IN_MS, reservation: 'draw' });
  const begin = Date.now() + STARTS_IN_MS;

  await loginBySms(page, undefined, '/');
  await page.goto(`/shops/${f.shopId}`);
  const box = page.getByTestId('voucher').filter({ hasText: v.title }).getByTestId('seckill-grab');
  const reservation = box.getByTestId('reservation');
  await expect(reservation.getByTestId('reservation-count')).toHaveText('0 人已预约');
  await expect(reservation.getByTestId('reservation-seed')).toContainText('种子哈希');
  await expect(box.getByTestId('seckill-button')).toBeDisabled();
  await box.scrollIntoViewIfNeeded();
  await look(page, 'reservation-open');

  await reservation.getByTestId('reservation-button').click();
  await expect(reservation.getByTestId('reservation-state')).toHaveAttribute('data-me', 'reserved');
  await expect(reservation.getByTestId('reservation-count')).toHaveText('1 人已预约');
  await expect(reservation.getByTestId('reservation-button')).toHaveText('取消预约');
  await look(page, 'reservation-reserved');
  // A reload still says so (the server's word, not the page's memory).
  await page.reload();
  await expect(reservation.getByTestId('reservation-state')).toHaveAttribute('data-me', 'reserved');
  await expect(reservation.getByTestId('reservation-state')).toContainText('已预约');

  // The start: the box asks again, the look runs the draw; one reservation, one unit: 已中签.
  await page.waitForTimeout(Math.max(0, begin - Date.now()));
  await expect(reservation.getByTestId('reservation-state')).toHaveAttribute('data-me', 'won', { timeout: 15_000 });
  await expect(reservation.getByTestId('reservation-seed')).toContainText('1/1 人中签');
  await expect(box.getByTestId('seckill-button')).toHaveText('立即抢购');
  await expect(reservation.getByTestId('reservation-state')).toHaveText('已中签，可以抢购');
  await look(page, 'reservation-won');

  await box.getByTestId('seckill-button').click();
  const result = box.getByTestId('seckill-result');
  await expect(result).toHaveAttribute('data-state', 'created', { timeout: 15_000 });
  await look(page, 'reservation-grabbed');
  await result.getByTestId('seckill-order-link').click();
  await expect(page).toHaveURL(/\/orders/);
  const item = page.getByTestId('order-item').filter({ hasText: v.title });
  await expect(item.getByTestId('order-status')).toHaveText('待支付');
  await look(page, 'reservation-order');

  // Someone who did not reserve: told so, the button stays shut.
  const other = await browser.newContext();
  const stranger = await other.newPage();
  await loginBySms(stranger, undefined, '/');
  await stranger.goto(`/shops/${f.shopId}`);
  const theirs = stranger.getByTestId('voucher').filter({ hasText: v.title }).getByTestId('seckill-grab');
  await expect(theirs.getByTestId('reservation-state')).toHaveAttribute('data-me', 'none');
  await expect(theirs.getByTestId('seckill-button')).toBeDisabled();
  await theirs.scrollIntoViewIfNeeded();
  await look(stranger, 'reservation-stranger');
  await other.close();

  const merchant = await browser.newContext({ viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false });
  const console_ = await merchant.newPage();
  // The new-voucher form offers the two modes and the reservation window.
  await loginByPassword(console_, MERCHANT.phone, MERCHANT.password, '/admin/vouchers/new');
  await console_.getByTestId('voucher-reservation-mode').selectOption('draw');
  await expect(console_.getByTestId('voucher-reserve-begin')).toBeVisible();
  await look(console_, 'reservation-new-voucher-form');
  await console_.goto(`/admin/vouchers/${v.id}`);
  const panel = console_.getByTestId('reservation-panel');
  await expect(panel.getByTestId('reservation-total')).toHaveText('1');
  await expect(panel.getByTestId('reservation-per-minute').locator('li')).toHaveCount(1);
  await expect(panel.getByTestId('draw-winners')).toHaveText('1');
  await expect(panel.getByTestId('draw-result')).toContainText('按公布的种子重算结果一致');
  await look(console_, 'reservation-console');
  await merchant.close();
});
