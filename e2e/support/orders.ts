/** The browser specs' look at 我的订单. */
import { expect, type Page } from '@playwright/test';

/**
 * Waits until 我的订单 lists the order of the voucher titled `title` with the status text `status`,
 * reloading as the page tells its reader to (刚抢到的券需要片刻生成订单，稍后刷新即可看到): the page
 * lists what MySQL holds when it is rendered, and the worker may write a just-bought order a moment
 * after the buyer's click brought them here.
 */
export async function expectOrderListed(page: Page, title: string, status: string, timeoutMs = 15_000): Promise<void> {
  const item = page.getByTestId('order-item').filter({ hasText: title }).getByTestId('order-status');
  await expect(async () => {
    if ((await item.count()) === 0) await page.reload();
    await expect(item).toHaveText(status, { timeout: 1_000 });
  }).toPass({ timeout: timeoutMs });
}
