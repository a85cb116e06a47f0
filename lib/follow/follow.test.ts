/** Follows: idempotent writes, counts, 共同关注 without SINTER, and the SET rebuilt from MySQL. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { commonFollows, follow, followedIds, unfollow, userProfile } from '@/lib/follow/follow.service';
import { makeUsers } from '@/e2e/support/fixtures/blog';

let u: string[] = [];
beforeAll(async () => {
  u = await makeUsers(db, 6, 'fol');
});
afterAll(async () => {
  await closeDb();
  await closeRedis();
});

describe('follows', () => {
  it('follow and unfollow are idempotent and counted from MySQL', async () => {
    await Promise.all([follow(db, redis, u[0]!, u[1]!), follow(db, redis, u[0]!, u[1]!), follow(db, redis, u[0]!, u[1]!)]);
    await follow(db, redis, u[2]!, u[1]!);
    const p = await userProfile(db, redis, u[1]!, u[0]!);
    expect(p).toMatchObject({ followers: 2, following: 0, followedByMe: true });
    await unfollow(db, redis, u[0]!, u[1]!);
    await unfollow(db, redis, u[0]!, u[1]!);
    expect(await userProfile(db, redis, u[1]!, u[0]!)).toMatchObject({ followers: 1, followedByMe: false });
    await expect(follow(db, redis, u[0]!, u[0]!)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(follow(db, redis, u[0]!, '987654321987')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('共同关注 intersects two single-slot reads', async () => {
    for (const t of [u[3]!, u[4]!, u[5]!]) await follow(db, redis, u[0]!, t);
    for (const t of [u[4]!, u[5]!, u[1]!]) await follow(db, redis, u[2]!, t);
    const common = await commonFollows(db, redis, u[0]!, u[2]!);
    expect(common.items.map((c) => c.id).sort()).toEqual([u[4]!, u[5]!].sort());
    expect(common).toMatchObject({ total: 2, next: null });
  });

  it('a lost SET is rebuilt whole from MySQL, never left partial by a write', async () => {
    await redis.del(keys.follows(u[0]!));
    await unfollow(db, redis, u[0]!, u[3]!); // written while the SET is missing: must not create a partial one
    expect(await redis.exists(keys.follows(u[0]!))).toBe(0);
    expect([...(await followedIds(db, redis, u[0]!))].sort()).toEqual([u[4]!, u[5]!].sort());
    expect(await redis.ttl(keys.follows(u[0]!))).toBeGreaterThan(0);
    await follow(db, redis, u[0]!, u[3]!); // while cached: updated in place
    expect(await redis.sismember(keys.follows(u[0]!), u[3]!)).toBe(1);
  });
});
