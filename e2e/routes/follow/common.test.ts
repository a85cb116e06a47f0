/**
 * 共同关注 pages instead of stopping silently at 50: two users who both follow 120 people get
 * every one of them over three pages, in id order, each once, with the total on every page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { callRoute, loginNewUser } from '@/e2e/support/helpers';
import { makeUsers } from '@/e2e/support/fixtures/blog';
import * as common from '@/app/api/users/[id]/common/route';

type Login = Awaited<ReturnType<typeof loginNewUser>>;
let me: Login;
let them: Login;
let shared: string[] = [];

beforeAll(async () => {
  [me, them] = await Promise.all([loginNewUser(), loginNewUser()]);
  const people = await makeUsers(db, 130, 'common');
  shared = people.slice(0, 120);
  const onlyMine = people.slice(120);
  await db.insertInto('tb_follow').values([...shared, ...onlyMine].map((f) => ({ user_id: me.userId, follow_user_id: f }))).execute();
  await db.insertInto('tb_follow').values(shared.map((f) => ({ user_id: them.userId, follow_user_id: f }))).execute();
  await Promise.all([redis.del(keys.follows(me.userId)), redis.del(keys.follows(them.userId))]);
});
afterAll(async () => {
  await db.deleteFrom('tb_follow').where('user_id', 'in', [me.userId, them.userId]).execute();
  await closeDb();
  await closeRedis();
});

describe('共同关注 paging', () => {
  it('120 in common: three pages of 50, 50 and 20, total 120 on each, every one once, in id order', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    const sizes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await callRoute(common.GET, { token: me.token, params: { id: them.userId }, query: after ? { after } : {} });
      expect(r.status).toBe(200);
      expect(r.json.data.total).toBe(120);
      sizes.push(r.json.data.items.length);
      seen.push(...r.json.data.items.map((u: { id: string }) => u.id));
      after = r.json.data.next;
      if (!after) break;
    }
    expect(sizes).toEqual([50, 50, 20]);
    expect(seen).toEqual([...shared].sort((a, b) => Number(BigInt(a) - BigInt(b))));
  });

  it('a malformed cursor is a 400', async () => {
    const r = await callRoute(common.GET, { token: me.token, params: { id: them.userId }, query: { after: 'abc' } });
    expect(r.status).toBe(400);
  });
});
