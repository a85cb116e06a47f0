/**
 * The 点评 journey in two real browsers against the production build and the real worker: the
 * author writes a note with two images (uploaded with progress) → it shows on the shop page and,
 * after the fan-out through RabbitMQ, in a follower's feed → the follower likes it → the author
 * sees the like and the liker. Screenshots of the pages land in test-results/social/.
 */
import { expect, test, type Browser, type Page } from '@playwright/test';
import sharp from 'sharp';
import { loginByPassword, loginBySms } from './support/login';
import { JourneyData } from './support/journey-data';
import { closeDb, createDb } from '../lib/db/client';
import { closeRedis, createRedis } from '../lib/redis/client';
import { keys } from '../lib/redis/keys';
import { runScript } from '../lib/redis/scripts';
import { storeImage } from '../lib/upload/image';
import { FEED_SCAN_MAX } from '../lib/feed/feed.service';

const SHOP = '103茶餐厅'; // a seeded shop

async function picture(hue: number): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="hsl(${hue},70%,60%)"/><circle cx="200" cy="150" r="90" fill="#fff"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg().toBuffer();
}

async function newUser(browser: Browser): Promise<{ page: Page; id: string; nick: string }> {
  const page = await (await browser.newContext({ ...test.info().project.use })).newPage();
  await loginBySms(page, undefined, '/');
  const me = await (await page.request.get('/api/user/me')).json();
  return { page, id: me.data.id, nick: me.data.nickName };
}

const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/social/${name}.png`, fullPage: true });

test('write a note with two images → shop page and follower feed → follower likes → author sees it', async ({ browser }) => {
  const author = await newUser(browser);
  const follower = await newUser(browser);

  await follower.page.goto(`/users/${author.id}`);
  await follower.page.getByTestId('follow-button').click();
  await expect(follower.page.getByTestId('follow-button')).toHaveText('已关注');

  // The author writes the note from the shop page.
  const data = new JourneyData(SHOP);
  const shopId = await data.shopId();
  await data.dispose();
  await author.page.goto(`/shops/${shopId}`);
  await author.page.getByTestId('shop-write-blog').click();
  await expect(author.page.getByTestId('blog-shop-select')).toHaveValue(shopId);
  await author.page.getByTestId('blog-file-input').setInputFiles([
    { name: 'one.jpg', mimeType: 'image/jpeg', buffer: await picture(20) },
    { name: 'two.jpg', mimeType: 'image/jpeg', buffer: await picture(200) },
  ]);
  await expect(author.page.locator('[data-testid=upload-item][data-done=true]')).toHaveCount(2);
  const title = `e2e 探店 ${Date.now()}`;
  await author.page.getByTestId('blog-title-input').fill(title);
  await author.page.getByTestId('blog-content-input').fill('<b>不是粗体</b>\n第二行');
  await shot(author.page, 'write-form');
  await author.page.getByTestId('blog-submit').click();
  await expect(author.page.getByTestId('blog-title')).toHaveText(title);
  await expect(author.page.getByTestId('blog-content')).toHaveText('<b>不是粗体</b>\n第二行');
  await expect(author.page.getByTestId('blog-images').locator('img')).toHaveCount(2);
  const blogUrl = author.page.url();

  await author.page.goto(`/shops/${shopId}`);
  await expect(author.page.getByTestId('shop-blogs').getByTestId('blog-card').filter({ hasText: title })).toBeVisible();

  // The fan-out runs in the worker: the follower's feed gets the note shortly after.
  await expect
    .poll(
      async () => {
        await follower.page.goto('/feed');
        return follower.page.getByTestId('blog-card').filter({ hasText: title }).count();
      },
      { timeout: 20_000 },
    )
    .toBe(1);
  await shot(follower.page, 'feed');
  await follower.page.getByTestId('blog-card').filter({ hasText: title }).click();
  await expect(follower.page.getByTestId('like-count')).toHaveText('0');
  await follower.page.getByTestId('like-button').click();
  await expect(follower.page.getByTestId('like-button')).toHaveAttribute('data-liked', 'true');
  await expect(follower.page.getByTestId('like-count')).toHaveText('1');

  await author.page.goto(blogUrl);
  await expect(author.page.getByTestId('like-count')).toHaveText('1');
  await expect(author.page.getByTestId('blog-liker')).toHaveCount(1);
  await expect(author.page.getByTestId('blog-liker')).toHaveAttribute('title', follower.nick);
  await shot(author.page, 'note');
});

test('feed: older notes behind many deleted ones stay reachable (no empty state while a cursor is left)', async ({ browser }) => {
  const author = await newUser(browser);
  const follower = await newUser(browser);
  // Set-up straight into MySQL + Redis (the fan-out's result): one old note, then more deleted
  // newer ones than a single feed answer reads past.
  const db = createDb(undefined, 2);
  const redis = createRedis();
  try {
    const shopId = String((await db.selectFrom('tb_shop').select('id').where('name', '=', SHOP).executeTakeFirstOrThrow()).id);
    const image = (await storeImage(await picture(120))).name;
    const title = `e2e 较早的笔记 ${Date.now()}`;
    const add = async (t: string) => String((await db.insertInto('tb_blog').values({ shop_id: shopId, user_id: author.id, title: t, content: '还在', images: image }).executeTakeFirstOrThrow()).insertId);
    const old = await add(title);
    // The follower follows the author (a feed shows the notes of whom one follows now).
    await db.insertInto('tb_follow').values({ user_id: follower.id, follow_user_id: author.id }).execute();
    await redis.del(keys.follows(follower.id));
    const deleted: string[] = [];
    for (let i = 0; i < FEED_SCAN_MAX + 5; i++) deleted.push(await add(`删 ${i}`));
    const t0 = Date.now() - 3600_000;
    for (const [i, id] of [old, ...deleted].entries()) await runScript(redis, 'feed-push', [keys.feed(follower.id)], [id, t0 + i, 1000, 3600]);
    await db.deleteFrom('tb_blog').where('id', 'in', deleted).execute();

    await follower.page.goto('/feed');
    await expect(follower.page.getByTestId('feed-empty')).toHaveCount(0);
    await expect(follower.page.getByTestId('feed-skipped')).toBeVisible();
    await shot(follower.page, 'feed-skipped');
    await follower.page.getByTestId('feed-more').click();
    await expect(follower.page.getByTestId('blog-card').filter({ hasText: title })).toBeVisible();
    await expect(follower.page.getByTestId('feed-more')).toHaveCount(0);
    await shot(follower.page, 'feed-after-skipped');
  } finally {
    redis.disconnect();
    await db.destroy();
    await Promise.all([closeRedis(), closeDb()]); // the process-wide clients the imports opened
  }
});

test('pages at phone size: home hot notes, user page, sign-in', async ({ page }) => {
  await loginBySms(page, undefined, '/');
  await expect(page.getByTestId('hot-blogs').getByTestId('blog-card').first()).toBeVisible();
  await page.getByTestId('hot-blogs').scrollIntoViewIfNeeded();
  await shot(page, 'home');
  await page.getByTestId('hot-blogs').getByTestId('blog-card').first().click();
  await page.getByTestId('blog-author').click();
  await expect(page.getByTestId('user-page')).toBeVisible();
  await shot(page, 'user');
  await page.goto('/me');
  await page.getByTestId('sign-button').click();
  await expect(page.getByTestId('sign-button')).toHaveText('今日已签到');
  await expect(page.getByTestId('sign-streak')).toHaveText('1');
  await shot(page, 'sign');
});

test('console: a merchant sees daily UV and PV of its own shops', async ({ browser }) => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'zh-CN', timezoneId: 'Asia/Shanghai' })).newPage();
  await loginByPassword(page, '13800000001', 'merchant123', '/admin/traffic');
  await expect(page).toHaveURL(/\/admin\/traffic$/);
  const shops = page.getByTestId('traffic-shop');
  await expect(shops.first()).toBeVisible();
  // The merchant owns six demo shops; the seed gave them 30 days of visits.
  expect(await shops.count()).toBe(6);
  expect(Number(await shops.first().getByTestId('traffic-chart').getAttribute('data-uv'))).toBeGreaterThan(0);
  await shot(page, 'console-traffic');
});
