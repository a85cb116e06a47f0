/**
 * Every write of the 点评 half is limited per user: a real burst of one user's requests, all at
 * once, gets 429 with Retry-After past the limit, and the requests inside it are served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { endSocialSuite, insertNote, makeShop, storedImageName } from '@/e2e/support/fixtures/blog';
import * as blog from '@/app/api/blogs/[id]/route';
import * as like from '@/app/api/blogs/[id]/like/route';
import * as comments from '@/app/api/blogs/[id]/comments/route';
import * as followRoute from '@/app/api/users/[id]/follow/route';
import * as sign from '@/app/api/sign/route';

type Login = Awaited<ReturnType<typeof loginNewUser>>;
let author: Login;
let noteId = '';

beforeAll(async () => {
  author = await loginNewUser();
  noteId = await insertNote(db, author.userId, await makeShop(), await storedImageName());
});
afterAll(endSocialSuite);

async function burst(n: number, call: () => ReturnType<typeof callRoute>) {
  const res = await Promise.all(Array.from({ length: n }, call));
  const limited = res.filter((r) => r.status === 429);
  for (const r of limited) {
    expect(r.json.error.code).toBe('RATE_LIMITED');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  }
  return { served: res.length - limited.length, limited: limited.length, statuses: new Set(res.map((r) => r.status)) };
}

describe('per-user limits on the social writes', () => {
  it('like toggles: 60 a minute, then 429 with Retry-After', async () => {
    const u = await loginNewUser();
    const r = await burst(75, () => callRoute(like.POST, { method: 'POST', token: u.token, params: { id: noteId } }));
    expect(r).toMatchObject({ served: 60, limited: 15 });
    expect(r.statuses).toEqual(new Set([200, 429]));
  });

  it('follow and unfollow share 60 a minute', async () => {
    const u = await loginNewUser();
    const r = await burst(70, () => callRoute(followRoute.POST, { method: 'POST', token: u.token, params: { id: author.userId } }));
    expect(r).toMatchObject({ served: 60, limited: 10 });
    const un = await callRoute(followRoute.DELETE, { method: 'DELETE', token: u.token, params: { id: author.userId } });
    expect(un.status).toBe(429);
  });

  it('note edits and deletions: 60 an hour', async () => {
    const u = await loginNewUser();
    // Someone else's note: every served request is a 403, the burst past the limit a 429.
    const r = await burst(70, () => callRoute(blog.PUT, { method: 'PUT', token: u.token, params: { id: noteId }, body: { title: '改' } }));
    expect(r).toMatchObject({ served: 60, limited: 10 });
    expect(r.statuses).toEqual(new Set([403, 429]));
    const del = await callRoute(blog.DELETE, { method: 'DELETE', token: u.token, params: { id: noteId } });
    expect(del.status).toBe(429);
  });

  it('sign-in posts: 10 a minute', async () => {
    const u = await loginNewUser();
    const r = await burst(16, () => callRoute(sign.POST, { method: 'POST', token: u.token }));
    expect(r).toMatchObject({ served: 10, limited: 6 });
  });

  it('comments (with new notes): 30 an hour', async () => {
    const u = await loginNewUser();
    const r = await burst(36, () => callRoute(comments.POST, { token: u.token, params: { id: noteId }, body: { content: '好吃' } }));
    expect(r).toMatchObject({ served: 30, limited: 6 });
  });

  it('one user used up is not everyone: another user still likes at once', async () => {
    const other = await loginNewUser();
    const r = await callRoute(like.POST, { method: 'POST', token: other.token, params: { id: noteId } });
    expect(r.status).toBe(200);
    expect(await redis.zscore(`blog:liked:{${noteId}}`, other.userId)).not.toBeNull();
  });
});
