/**
 * The 点评 API through its route handlers: write a note with uploaded images, owner-only edit and
 * delete, text kept as text, comments, likes with the first likers, follow → feed, sign-in, shop views.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { beijingDay } from '@/lib/sign/beijing-day';
import { fanOut } from '@/lib/feed/fanout';
import { endSocialSuite, makeShop, uploadPicture } from '@/e2e/support/fixtures/blog';
import * as blogs from '@/app/api/blogs/route';
import * as blog from '@/app/api/blogs/[id]/route';
import * as like from '@/app/api/blogs/[id]/like/route';
import * as comments from '@/app/api/blogs/[id]/comments/route';
import * as shopBlogs from '@/app/api/shops/[id]/blogs/route';
import * as shopView from '@/app/api/shops/[id]/view/route';
import * as followRoute from '@/app/api/users/[id]/follow/route';
import * as profile from '@/app/api/users/[id]/route';
import * as feed from '@/app/api/feed/route';
import * as sign from '@/app/api/sign/route';

type Login = Awaited<ReturnType<typeof loginNewUser>>;
let author: Login;
let reader: Login;
let shopId = '';

beforeAll(async () => {
  [author, reader] = await Promise.all([loginNewUser(), loginNewUser()]);
  shopId = await makeShop();
});
afterAll(endSocialSuite);


describe('notes API', () => {
  let noteId = '';
  const title = '<img src=x onerror=alert(1)> 好店';

  it('writes a note with two uploaded images; refuses unknown images and shops', async () => {
    const images = [await uploadPicture(author.token), await uploadPicture(author.token)];
    const bad = await callRoute(blogs.POST, { token: author.token, body: { shopId, title: 't', content: 'c', images: ['0'.repeat(32) + '.webp'] } });
    expect(bad.status).toBe(400);
    const noShop = await callRoute(blogs.POST, { token: author.token, body: { shopId: '987654321987', title: 't', content: 'c', images } });
    expect(noShop.status).toBe(404);
    const tooMany = await callRoute(blogs.POST, { token: author.token, body: { shopId, title: 't', content: 'c', images: Array(10).fill(images[0]) } });
    expect(tooMany.status).toBe(400);

    const r = await callRoute(blogs.POST, { token: author.token, body: { shopId, title, content: '第一行\n第二行', images } });
    expect(r.status).toBe(200);
    noteId = r.json.data.id;
    const got = await callRoute(blog.GET, { params: { id: noteId } });
    expect(got.json.data).toMatchObject({ title, content: '第一行\n第二行', images: images.map((n) => `/api/uploads/${n}`), author: { id: author.userId }, shop: { id: shopId } });
    const list = await callRoute(shopBlogs.GET, { params: { id: shopId } });
    expect(list.json.data.map((b: { id: string }) => b.id)).toContain(noteId);
  });

  it('only the author edits or deletes', async () => {
    const edit = await callRoute(blog.PUT, { method: 'PUT', token: reader.token, params: { id: noteId }, body: { title: '改了' } });
    expect(edit.status).toBe(403);
    const del = await callRoute(blog.DELETE, { method: 'DELETE', token: reader.token, params: { id: noteId } });
    expect(del.status).toBe(403);
    const own = await callRoute(blog.PUT, { method: 'PUT', token: author.token, params: { id: noteId }, body: { content: '更新后的正文' } });
    expect(own.json.data.content).toBe('更新后的正文');
  });

  it('likes toggle, show my state and the first likers; comments are listed', async () => {
    const on = await callRoute(like.POST, { method: 'POST', token: reader.token, params: { id: noteId } });
    expect(on.json.data).toEqual({ isLiked: true, liked: 1 });
    await callRoute(comments.POST, { token: reader.token, params: { id: noteId }, body: { content: '去过，确实好吃' } });
    const seen = await callRoute(blog.GET, { token: reader.token, params: { id: noteId } });
    expect(seen.json.data).toMatchObject({ isLiked: true, liked: 1, comments: 1, likers: [{ id: reader.userId }], commentList: [{ content: '去过，确实好吃', user: { id: reader.userId } }] });
    const off = await callRoute(like.POST, { method: 'POST', token: reader.token, params: { id: noteId } });
    expect(off.json.data).toEqual({ isLiked: false, liked: 0 });
  });

  it('follow → the feed pages with a cursor', async () => {
    expect((await callRoute(followRoute.POST, { method: 'POST', token: reader.token, params: { id: author.userId } })).status).toBe(200);
    const p = await callRoute(profile.GET, { token: reader.token, params: { id: author.userId } });
    expect(p.json.data).toMatchObject({ followers: 1, followedByMe: true });
    const row = await db.selectFrom('tb_blog').select('create_time').where('id', '=', noteId).executeTakeFirstOrThrow();
    // The worker's step, run here directly (the fan-out test covers the queue).
    await fanOut(db, redis, { blogId: noteId, authorId: author.userId, at: row.create_time.getTime() }, { blogExists: async () => true });
    const page = await callRoute(feed.GET, { token: reader.token });
    expect(page.json.data.items.map((b: { id: string }) => b.id)).toEqual([noteId]);
    expect(page.json.data.next).toBeNull();
    expect((await callRoute(feed.GET, { token: reader.token, query: { max: 'x' } })).status).toBe(400);
  });

  it('sign-in is once a day', async () => {
    const first = await callRoute(sign.POST, { method: 'POST', token: reader.token });
    expect(first.json.data).toMatchObject({ already: false, signedToday: true, streak: 1 });
    const second = await callRoute(sign.POST, { method: 'POST', token: reader.token });
    expect(second.json.data).toMatchObject({ already: true, streak: 1 });
  });

  it('a shop view sets a visitor cookie once and counts UV and PV; an unknown shop counts nothing', async () => {
    const day = beijingDay(new Date()).yyyyMMdd;
    const first = await callRoute(shopView.POST, { method: 'POST', params: { id: shopId } });
    const cookie = /hmdp_vid=([^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
    expect(cookie).toMatch(/^[0-9a-f-]{36}$/);
    const again = await callRoute(shopView.POST, { method: 'POST', params: { id: shopId }, headers: { cookie: `hmdp_vid=${cookie}` } });
    expect(again.headers.get('set-cookie')).toBeNull();
    await callRoute(shopView.POST, { method: 'POST', params: { id: shopId }, headers: { cookie: 'hmdp_vid=../../evil' } });
    expect(await redis.pfcount(keys.shopUv(shopId, day))).toBe(2);
    expect(await redis.get(keys.shopPv(shopId, day))).toBe('3');
    expect((await callRoute(shopView.POST, { method: 'POST', params: { id: '987654321987' } })).status).toBe(404);
    expect(await redis.exists(keys.shopUv('987654321987', day))).toBe(0);
  });

  it('views of unknown shops from one client stop at its limit before they cost a lookup (no null marker past it)', async () => {
    const base = 8_000_000_000_000 + Math.floor(Math.random() * 1e9);
    const peer = { [PEER_HEADER]: `203.0.113.${Math.floor(Math.random() * 200)}` };
    const statuses: number[] = [];
    for (let i = 0; i < 320; i += 40) {
      const rs = await Promise.all(Array.from({ length: 40 }, (_, j) => callRoute(shopView.POST, { method: 'POST', params: { id: String(base + i + j) }, headers: peer })));
      statuses.push(...rs.map((r) => r.status));
    }
    let markers = 0;
    for (let i = 0; i < 320; i++) markers += await redis.exists(keys.shop(String(base + i)));
    expect(statuses.filter((x) => x === 429).length).toBe(20); // shopViewIp: 300 a minute
    expect(markers).toBeLessThanOrEqual(300);
  });

  it('the author deletes the note: gone from the shop list and the feed', async () => {
    expect((await callRoute(blog.DELETE, { method: 'DELETE', token: author.token, params: { id: noteId } })).status).toBe(200);
    expect((await callRoute(blog.GET, { params: { id: noteId } })).status).toBe(404);
    expect((await callRoute(feed.GET, { token: reader.token })).json.data.items).toEqual([]);
  });
});
