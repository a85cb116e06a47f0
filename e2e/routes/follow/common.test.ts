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
import * as followRoute from '@/app/api/users/[id]/follow/route';
import { MAX_FOLLOWING } from '@/lib/follow/follow.service';

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

describe('the follow cap', () => {
  it(`holds against parallel follows: one under the cap, 30 at once, exactly one more (${MAX_FOLLOWING} in all)`, async () => {
    const follower = await loginNewUser();
    const targets = await makeUsers(db, MAX_FOLLOWING + 29, 'cap');
    const pre = targets.slice(0, MAX_FOLLOWING - 1);
    for (let i = 0; i < pre.length; i += 500) await db.insertInto('tb_follow').values(pre.slice(i, i + 500).map((t) => ({ user_id: follower.userId, follow_user_id: t }))).execute();
    const rs = await Promise.all(targets.slice(MAX_FOLLOWING - 1).map((t) => callRoute(followRoute.POST, { method: 'POST', token: follower.token, params: { id: t } })));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 409)).toHaveLength(29);
    const n = await db.selectFrom('tb_follow').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', follower.userId).executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(MAX_FOLLOWING);
    await db.deleteFrom('tb_follow').where('user_id', '=', follower.userId).execute();
  });
});
