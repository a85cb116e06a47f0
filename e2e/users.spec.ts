/**
 * The admin's role change in the console: a consumer logged in on one browser is promoted to
 * merchant from the admin's browser; the consumer's login ends at once (sessions carry the role
 * they were created with). Merchants do not get the page.
 */
import { expect, test } from '@playwright/test';
import { loginByPassword, loginBySms, randomPhone } from './support/login';

test('an admin changes a role and the user is logged out everywhere', async ({ page, browser }) => {
  const consumer = await browser.newContext();
  const consumerPage = await consumer.newPage();
  const phone = await loginBySms(consumerPage, randomPhone());

  await loginByPassword(page, '13800000000', 'admin123', `/admin/users?phone=${phone}`);
  await expect(page.getByTestId('users-role')).toHaveText('普通用户');
  await page.getByTestId('users-set-merchant').click();
  await page.getByTestId('users-set-merchant-confirm').click();
  await expect(page.getByTestId('users-result')).toContainText('已改为商家');
  await expect(page.getByTestId('users-role')).toHaveText('商家');

  await consumerPage.goto('/me');
  await expect(consumerPage).toHaveURL(/\/login/);
  await consumer.close();
});

test('merchants do not get the role page', async ({ page }) => {
  await loginByPassword(page, '13800000001', 'merchant123', '/admin/vouchers');
  await expect(page.getByTestId('admin-nav-users')).toHaveCount(0);
  // The console streams its status before the page decides (as for another merchant's voucher):
  // the view is the 403 one, and the API behind it answers 403 (e2e/security/sessions.test.ts).
  await page.goto('/admin/users?phone=13800000000');
  await expect(page.getByTestId('forbidden')).toBeVisible();
  await expect(page.getByTestId('users-found')).toHaveCount(0);
});
