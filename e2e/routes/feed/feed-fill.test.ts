/**
 * A feed page fills itself past deleted notes: G follows H, H publishes 13 notes and deletes the
 * newest 10, and G's first page holds the 3 older ones (it used to be empty, with a cursor). When
 * more deleted entries than one answer may read stand in front, the answer is empty with a cursor,
 * and following the cursor reaches the notes behind them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { fanOut } from '@/lib/feed/fanout';
import { FEED_SCAN_MAX } from '@/lib/feed/feed.service';
import { endSocialSuite, insertNote, makeShop, storedImageName, uploadedImageName } from '@/e2e/support/fixtures/blog';
import * as blogs from '@/app/api/blogs/route';
import * as blog from '@/app/api/blogs/[id]/route';
import * as followRoute from '@/app/api/users/[id]/follow/route';
import * as feed from '@/app/api/feed/route';

type Login = Awaited<ReturnType<typeof loginNewUser>>;
let g: Login;
let h: Login;
let shopId = '';

beforeAll(async () => {
  [g, h] = await Promise.all([loginNewUser(), loginNewUser()]);
  shopId = await makeShop();
});
afterAll(endSocialSuite);

type Page = { items: { id: string }[]; next: { max: number; offset: number } | null };

async function feedPage(token: string, next: Page['next']): Promise<Page> {
  const r = await callRoute(feed.GET, { token, query: next ? { max: String(next.max), offset: String(next.offset) } : {} });
  expect(r.status).toBe(200);
  return r.json.data as Page;
}

describe('an unfollow', () => {
  it('takes the author\'s notes out of the feed at once, not only the later ones; following again brings them back', async () => {
    const [reader, author] = await Promise.all([loginNewUser(), loginNewUser()]);
    const note = await insertNote(db, author.userId, shopId, await storedImageName(), '取关前');
    expect((await callRoute(followRoute.POST, { method: 'POST', token: reader.token, params: { id: author.userId } })).status).toBe(200);
    await runScript(redis, 'feed-push', [keys.feed(reader.userId)], [note, Date.now(), 1000, 3600]);
    expect((await feedPage(reader.token, null)).items.map((b) => b.id)).toEqual([note]);
    expect((await callRoute(followRoute.DELETE, { method: 'DELETE', token: reader.token, params: { id: author.userId } })).status).toBe(200);
    expect((await feedPage(reader.token, null)).items).toEqual([]);
    expect((await callRoute(followRoute.POST, { method: 'POST', token: reader.token, params: { id: author.userId } })).status).toBe(200);
    expect((await feedPage(reader.token, null)).items.map((b) => b.id)).toEqual([note]);
  });
});

describe('feed pages skip deleted notes and read on', () => {
  it('13 notes, the newest 10 deleted: the first page holds the 3 older ones', async () => {
    expect((await callRoute(followRoute.POST, { method: 'POST', token: g.token, params: { id: h.userId } })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 13; i++) {
      const r = await callRoute(blogs.POST, { token: h.token, body: { shopId, title: `第${i}篇`, content: '内容', images: [await uploadedImageName(h.userId)] } });
      expect(r.status).toBe(200);
      ids.push(r.json.data.id);
      const row = await db.selectFrom('tb_blog').select('create_time').where('id', '=', r.json.data.id).executeTakeFirstOrThrow();
      // The worker's step, run here directly (lib/feed/fanout.test.ts covers the queue).
      await fanOut(db, redis, { blogId: r.json.data.id, authorId: h.userId, at: row.create_time.getTime() + i }, { blogExists: async () => true });
    }
    for (const id of ids.slice(3)) expect((await callRoute(blog.DELETE, { method: 'DELETE', token: h.token, params: { id } })).status).toBe(200);

    const page = await feedPage(g.token, null);
    expect(page.items.map((b) => b.id)).toEqual(ids.slice(0, 3).reverse());
    expect(page.next).toBeNull();
  });

  it('a full page stops exactly at its tenth note, so the next page repeats and skips nothing', async () => {
    const reader = `5${Date.now()}`;
    await db.insertInto('tb_follow').values({ user_id: reader, follow_user_id: h.userId }).execute(); // a feed shows whom one follows
    const image = await storedImageName();
    const notes: string[] = [];
    for (let i = 0; i < 25; i++) notes.push(await insertNote(db, h.userId, shopId, image, `n${i}`));
    const t = 1_700_000_000_000;
    for (const [i, id] of notes.entries()) await runScript(redis, 'feed-push', [keys.feed(reader)], [id, t + Math.floor(i / 3), 1000, 3600]);
    // Every other note of the newest 16 deleted.
    const gone = new Set(notes.slice(9).filter((_, i) => i % 2 === 0));
    await db.deleteFrom('tb_blog').where('id', 'in', [...gone]).execute();
    const { readFeed } = await import('@/lib/feed/feed.service');
    const seen: string[] = [];
    let next: Page['next'] = null;
    for (let p = 0; p < 10; p++) {
      const page = await readFeed(db, redis, reader, next);
      if (page.next) expect(page.items).toHaveLength(10);
      seen.push(...page.items.map((b) => b.id));
      next = page.next;
      if (!next) break;
    }
    expect(seen).toEqual(notes.filter((id) => !gone.has(id)).reverse());
    await redis.del(keys.feed(reader));
  });

  it('more deleted entries than one answer reads: empty with a cursor, and the cursor reaches the rest', async () => {
    const reader = await loginNewUser();
    expect((await callRoute(followRoute.POST, { method: 'POST', token: reader.token, params: { id: h.userId } })).status).toBe(200);
    const image = await storedImageName();
    const old = [await insertNote(db, h.userId, shopId, image, '老一'), await insertNote(db, h.userId, shopId, image, '老二')];
    const deleted: string[] = [];
    for (let i = 0; i < FEED_SCAN_MAX + 10; i++) deleted.push(await insertNote(db, h.userId, shopId, image, `删${i}`));
    const t = 1_700_000_000_000;
    for (const [i, id] of [...old, ...deleted].entries()) await runScript(redis, 'feed-push', [keys.feed(reader.userId)], [id, t + i, 1000, 3600]);
    await db.deleteFrom('tb_blog').where('id', 'in', deleted).execute();

    const first = await feedPage(reader.token, null);
    expect(first.items).toEqual([]);
    expect(first.next).not.toBeNull();
    const second = await feedPage(reader.token, first.next);
    expect(second.items.map((b) => b.id)).toEqual([...old].reverse());
    expect(second.next).toBeNull();
  });
});
