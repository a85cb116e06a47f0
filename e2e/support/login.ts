/** Shared e2e steps: log a consumer in through the real SMS form, reading the code from Redis. */
import { expect, type Page } from '@playwright/test';
import Redis from 'ioredis';
import { forgetLimit } from '../../lib/rate-limit';
import { keys } from '../../lib/redis/keys';

export function randomPhone(): string {
  return `19${Math.floor(Math.random() * 10)}${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
}

export async function readDevSms(phone: string): Promise<string> {
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    for (let i = 0; i < 50; i++) {
      const code = await redis.get(keys.devSms(phone));
      if (code) return code;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no SMS code for ${phone}`);
  } finally {
    redis.disconnect();
  }
}

/**
 * Every browser login comes from 127.0.0.1: the per-address SMS cap (30 an hour) would count the
 * whole suite (and its retries) as one client, so each login starts that count afresh.
 */
async function forgetAddressSmsCount(): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    await forgetLimit('smsIpHourly', redis);
  } finally {
    redis.disconnect();
  }
}

export async function loginBySms(page: Page, phone = randomPhone(), next = '/'): Promise<string> {
  await forgetAddressSmsCount();
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.getByTestId('login-phone').fill(phone);
  await page.getByTestId('send-code').click();
  await expect(page.getByTestId('send-code')).toContainText('秒后重发');
  await page.getByTestId('login-code').fill(await readDevSms(phone));
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('header-nickname')).toBeVisible();
  return phone;
}

export async function loginByPassword(page: Page, phone: string, password: string, next = '/admin'): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.getByTestId('login-mode').click();
  await page.getByTestId('login-phone').fill(phone);
  await page.getByTestId('login-password').fill(password);
  await page.getByTestId('login-submit').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}
