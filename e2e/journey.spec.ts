/**
 * Consumer journeys in a real browser against the production build, the real order worker,
 * MySQL, Redis and RabbitMQ: every step under test is a click or a keystroke on our pages. Each
 * journey gets a fresh voucher of its own (MySQL + preheat, see support/journey-data.ts) on the
 * seeded shop, so no journey depends on another's stock; afterwards the flash-sale invariant numbers of the
 * voucher must hold once the worker has drained it.
 */
import { expect, test, type Page } from '@playwright/test';
import { journeyData } from './support/journey-data';
import { loginBySms } from './support/login';

const SHOP = '103茶餐厅'; // seeded in 美食, on that type's first page

const f = journeyData(SHOP);

function grabBox(page: Page, title: string) {
  return page.getByTestId('voucher').filter({ hasText: title }).getByTestId('seckill-grab');
}

/** Orders written, nothing oversold or duplicated, Redis and MySQL agreeing. */
async function expectSettled(voucherId: string, orders: number) {
  await expect.poll(async () => (await f.data.invariants(voucherId)).pending, { timeout: 15_000 }).toBe(0);
  const r = await f.data.invariants(voucherId);
  expect(r.violations).toEqual([]);
  expect(r.dbOrders).toBe(orders);
}

test('SMS login → home → 美食 → shop → grab → 抢购成功 → the order is created in 我的订单', async ({ page }) => {
  const v = await f.data.voucher({ stock: 5, label: '下单' });
  await loginBySms(page, undefined, '/');
  await expect(page).toHaveURL(/\/$/);

  await page.getByTestId('type-link').filter({ hasText: '美食' }).click();
  await expect(page.getByTestId('type-title')).toHaveText('美食');
  await page.getByTestId('shop-list').getByTestId('shop-card').filter({ hasText: SHOP }).click();
  await expect(page.getByTestId('shop-name')).toHaveText(SHOP);

  const box = grabBox(page, v.title);
  const button = box.getByTestId('seckill-button');
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 5 张');
  await expect(box.getByTestId('seckill-countdown')).toContainText('距结束');
  await expect(button).toHaveText('立即抢购');
  await button.click();

  const result = box.getByTestId('seckill-result');
  await expect(result).toContainText('抢购成功');
  // The box polls the order until the worker has written it.
  await expect(result).toHaveAttribute('data-state', 'created', { timeout: 15_000 });
  await expect(result).toContainText('抢购成功！订单已生成');
  await expect(button).toHaveText('已抢到');
  await expect(button).toBeDisabled();
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 4 张'); // the page's stock poll

  await page.getByTestId('nav-orders').click();
  await expect(page).toHaveURL(/\/orders$/);
  const item = page.getByTestId('order-item').filter({ hasText: v.title });
  await expect(item).toHaveCount(1);
  await expect(item).toContainText(SHOP);
  await expect(item.getByTestId('order-status')).toHaveAttribute('data-state', 'created');
  await expect(item.getByTestId('order-status')).toContainText('待支付');
  const order = await f.data.order(await item.getByTestId('order-id').innerText());
  expect(order?.voucherId).toBe(v.id);
  await expectSettled(v.id, 1);
});

test('grabbing the same voucher again is refused in the UI: 已抢过', async ({ page }) => {
  const v = await f.data.voucher({ stock: 5, label: '重复' });
  await loginBySms(page, undefined, `/shops/${f.shopId}`);
  const box = grabBox(page, v.title);
  await box.getByTestId('seckill-button').click();
  await expect(box.getByTestId('seckill-result')).toContainText('抢购成功');
  await expect(box.getByTestId('seckill-button')).toHaveText('已抢到');
  await expect(box.getByTestId('seckill-button')).toBeDisabled();

  // A fresh page knows nothing of the first grab; the server does.
  await page.reload();
  const again = grabBox(page, v.title);
  await expect(again.getByTestId('seckill-result')).toHaveCount(0);
  await again.getByTestId('seckill-button').click();
  await expect(again.getByTestId('seckill-result')).toHaveText('已抢过');
  await expect(again.getByTestId('seckill-result')).toHaveAttribute('data-state', 'ALREADY_BOUGHT');
  await expect(again.getByTestId('seckill-button')).toHaveText('已抢到');
  await expect(again.getByTestId('seckill-button')).toBeDisabled();
  await expect(again.getByTestId('seckill-remaining')).toHaveText('剩余 4 张');
  await expectSettled(v.id, 1);
});

test('a sold-out voucher shows 已售罄: as the grab result, and before any click', async ({ page, request }) => {
  const v = await f.data.voucher({ stock: 1, label: '售罄' });
  const other = await f.data.consumer();
  // Hold the page's stock poll so the button is still clickable after the other user's grab.
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  await page.route(`**/api/shops/${f.shopId}/vouchers`, async (route) => {
    await gate;
    await route.continue().catch(() => {}); // the page may have moved on
  });

  await loginBySms(page, undefined, `/shops/${f.shopId}`);
  const box = grabBox(page, v.title);
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 1 张');
  await expect(box.getByTestId('seckill-button')).toHaveText('立即抢购');

  const taken = await request.post(`/api/seckill/${v.id}`, { headers: { authorization: `Bearer ${other.token}` } });
  expect(taken.status(), await taken.text()).toBe(200);

  await box.getByTestId('seckill-button').click();
  await expect(box.getByTestId('seckill-result')).toHaveText('已售罄');
  await expect(box.getByTestId('seckill-result')).toHaveAttribute('data-state', 'SOLD_OUT');
  await expect(box.getByTestId('seckill-button')).toHaveText('已售罄');
  await expect(box.getByTestId('seckill-button')).toBeDisabled();
  release();
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 0 张', { timeout: 8000 });

  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.reload();
  const fresh = grabBox(page, v.title);
  await expect(fresh.getByTestId('seckill-remaining')).toHaveText('剩余 0 张');
  await expect(fresh.getByTestId('seckill-button')).toHaveText('已售罄');
  await expect(fresh.getByTestId('seckill-button')).toBeDisabled();
  await expect(fresh.getByTestId('seckill-result')).toHaveCount(0);
  await expectSettled(v.id, 1);
});

test("an upcoming voucher's countdown turns into a live grab button when its window opens", async ({ page }) => {
  await loginBySms(page, undefined, '/');
  const v = await f.data.voucher({ stock: 1, startsInMs: 8_000, label: '开抢' });
  await page.goto(`/shops/${f.shopId}`);
  await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));

  const box = grabBox(page, v.title);
  const button = box.getByTestId('seckill-button');
  await expect(box.getByTestId('seckill-countdown')).toHaveText(/^距开抢 00:00:0\d$/);
  await expect(button).toHaveText('即将开抢');
  await expect(button).toBeDisabled();
  const first = await box.getByTestId('seckill-countdown').innerText();
  await expect(box.getByTestId('seckill-countdown')).not.toHaveText(first); // it ticks

  await expect(button).toHaveText('立即抢购', { timeout: 12_000 });
  await expect(button).toBeEnabled();
  await expect(box.getByTestId('seckill-countdown')).toContainText('距结束');
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);

  await button.click();
  await expect(box.getByTestId('seckill-result')).toContainText('抢购成功');
  await expect(box.getByTestId('seckill-result')).toHaveAttribute('data-state', 'created', { timeout: 15_000 });
  // It was the only one: the stock poll reaches 0, and the buyer still reads 已抢到, not 已售罄.
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 0 张');
  await expect(button).toHaveText('已抢到');
  await expectSettled(v.id, 1);
});

test('a second grab Redis let through after forgetting the first is folded: the box says so and links to the kept order', async ({ page }, testInfo) => {
  const v = await f.data.voucher({ stock: 5, label: '折叠' });
  const phone = await loginBySms(page, undefined, '/');
  // Arranged from Node: an order this buyer already holds in MySQL that Redis has forgotten.
  const kept = await f.data.forgottenOrder(v.id, phone);

  await page.goto(`/shops/${f.shopId}`);
  const box = grabBox(page, v.title);
  const button = box.getByTestId('seckill-button');
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 5 张');
  const accepted = page.waitForResponse((r) => r.url().endsWith(`/api/seckill/${v.id}`) && r.request().method() === 'POST');
  await button.click();
  const grab = await accepted;
  expect(grab.status()).toBe(200); // Redis had no trace of the first grab
  const foldedId: string = (await grab.json()).data.orderId;
  expect(foldedId).not.toBe(kept);

  const result = box.getByTestId('seckill-result');
  await expect(result).toHaveAttribute('data-state', 'failed', { timeout: 15_000 });
  await expect(result).toContainText('你已有这张券的订单，这次抢购未生成新订单');
  await expect(button).toHaveText('已抢到');
  await expect(button).toBeDisabled();
  const link = box.getByTestId('seckill-kept-order-link');
  await expect(link).toHaveText('查看我的订单');
  await expect(link).toHaveAttribute('href', `/orders#order-${kept}`);
  await expect.poll(async () => (await f.data.invariants(v.id)).pending, { timeout: 15_000 }).toBe(0);
  expect(await f.data.orderIds(v.id, await f.data.userId(phone))).toEqual([kept]);
  // The second grab took a unit in Redis, the kept order one in MySQL: the two agree on 4.
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 4 张'); // the page's stock poll
  await page.screenshot({ path: testInfo.outputPath('folded-grab.png') });

  await link.click();
  await expect(page).toHaveURL(new RegExp(`/orders#order-${kept}$`));
  const item = page.locator(`#order-${kept}`);
  await expect(item).toBeInViewport();
  await expect(item).toContainText(v.title);
  await expect(item.getByTestId('order-status')).toHaveAttribute('data-state', 'created');
  await expect(page.getByTestId('order-item').filter({ hasText: v.title })).toHaveCount(1);
  await expectSettled(v.id, 1);
});

test('a grab shed with 503 + Retry-After is retried by the box after a jittered pause, and the retry is accepted', async ({ page }) => {
  const v = await f.data.voucher({ stock: 5, label: '重试' });
  await loginBySms(page, undefined, '/');
  // The hot server sheds above HOT_MAX_IN_FLIGHT (proven over HTTP in e2e/routes/hot/hot-server.test.ts);
  // here the browser sees that exact answer for the first two attempts, then the real server.
  const sent: number[] = [];
  await page.route(`**/api/seckill/${v.id}`, async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    sent.push(Date.now());
    if (sent.length > 2) return route.continue();
    await route.fulfill({
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '1' },
      body: JSON.stringify({ error: { code: 'SERVICE_UNAVAILABLE', message: '抢购人数太多，请稍后再试' } }),
    });
  });
  await page.goto(`/shops/${f.shopId}`);
  const box = grabBox(page, v.title);
  await expect(box.getByTestId('seckill-remaining')).toHaveText('剩余 5 张');
  await box.getByTestId('seckill-button').click();

  const result = box.getByTestId('seckill-result');
  await expect(result).toHaveAttribute('data-state', 'created', { timeout: 20_000 });
  expect(sent).toHaveLength(3);
  // 0.5–1.5 s × attempt: at least 0.5 s before the second attempt, at least 1 s before the third.
  expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(450);
  expect(sent[2]! - sent[1]!).toBeGreaterThanOrEqual(950);
  await expectSettled(v.id, 1);
});
