import { expect, test } from '@playwright/test';
import Redis from 'ioredis';
import { loginByPassword, loginBySms } from './support/login';

test('SMS login, the session survives a reload, logout ends it', async ({ page, context }) => {
  await page.goto('/me');
  await expect(page).toHaveURL(/\/login\?next=%2Fme/);
  await loginBySms(page, undefined, '/me');
  await expect(page).toHaveURL(/\/me$/);
  await expect(page.getByTestId('profile-nickname')).toHaveText(/^user_/);

  const cookie = (await context.cookies()).find((c) => c.name.includes('hmdp.session'));
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe('Lax');

  await page.reload();
  await expect(page.getByTestId('profile-nickname')).toBeVisible();

  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto('/me');
  await expect(page).toHaveURL(/\/login\?next=%2Fme/);
});

test('an expired session sends the user back to login', async ({ page }) => {
  await loginBySms(page, undefined, '/me');
  await expect(page.getByTestId('profile-nickname')).toBeVisible();
  // Expire every session server-side, as 30 idle minutes would.
  const redis = new Redis(process.env.REDIS_URL!);
  const tokens = await redis.keys('login:session:*');
  if (tokens.length) await redis.del(...tokens);
  redis.disconnect();
  await page.reload();
  await expect(page).toHaveURL(/\/login\?next=%2Fme/);
});

test('a wrong code shows an inline error and keeps the user on the form', async ({ page }) => {
  await page.goto('/login');
  await page.getByTestId('login-phone').fill('1391234');
  await page.getByTestId('send-code').click();
  await expect(page.getByTestId('login-error')).toHaveText('请输入正确的手机号');
  await page.getByTestId('login-phone').fill(`199${String(Date.now()).slice(-8)}`);
  await page.getByTestId('send-code').click();
  await expect(page.getByTestId('send-code')).toContainText('秒后重发');
  await page.getByTestId('login-code').fill('000000');
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('login-error')).toBeVisible();
  await expect(page).toHaveURL(/\/login/);
});

test("a password login leaves an httpOnly login-device cookie (the owner's way past the phone's ceiling of wrong passwords)", async ({ page, context }) => {
  await loginByPassword(page, '13800000001', 'merchant123');
  const device = (await context.cookies()).find((c) => c.name.endsWith('hmdp.device'));
  expect(device?.httpOnly).toBe(true);
  expect(device?.value).toMatch(/^[\w-]{22}\.\d+\.p\.[\w-]{43}$/);
});
