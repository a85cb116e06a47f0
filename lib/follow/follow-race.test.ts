/**
 * One user's follows and unfollows of one target, all at once: the cached follows:{userId} SET
 * must end as tb_follow says. A write that committed first but reached Redis last used to leave
 * them apart for the SET's TTL (a day): the feed kept hiding, or showing, that author's notes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, createDb, db, type DB } from '@/lib/db/client';
import { closeRedis, createRedis, redis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { follow, followedIds, unfollow } from '@/lib/follow/follow.service';
import { makeUsers } from '@/e2e/support/fixtures/blog';

let u: string[] = [];
/** Six web processes: each its own MySQL pool and Redis connection, as behind a load balancer. */
const hosts: { db: DB; redis: RedisClient }[] = Array.from({ length: 6 }, () => ({ db: createDb(undefined, 4), redis: createRedis() }));
beforeAll(async () => {
  u = await makeUsers(db, 2, 'storm');
});
afterAll(async () => {
  await db.deleteFrom('tb_follow').where('user_id', '=', u[0]!).execute();
  await redis.del(keys.follows(u[0]!));
  await Promise.all(hosts.map(async (h) => {
    await h.db.destroy();
    h.redis.disconnect();
  }));
  await closeDb();
  await closeRedis();
});

describe('a follow/unfollow storm', () => {
  it('600 rounds of 24 follows and unfollows at once: the cached SET ends as tb_follow says every time', async () => {
    const [me, target] = [u[0]!, u[1]!];
    await followedIds(db, redis, me); // cached: each write updates the SET in place
    const apart: number[] = [];
    for (let round = 0; round < 600; round++) {
      await Promise.all(
        Array.from({ length: 24 }, (_, i) => {
          const h = hosts[i % hosts.length]!;
          return (i + round) % 2 === 0 ? follow(h.db, h.redis, me, target) : unfollow(h.db, h.redis, me, target);
        }));
      const inDb = !!(await db.selectFrom('tb_follow').select('id').where('user_id', '=', me).where('follow_user_id', '=', target).executeTakeFirst());
      expect(await redis.exists(keys.follows(me))).toBe(1);
      const inSet = (await redis.sismember(keys.follows(me), target)) === 1;
      if (inSet !== inDb) apart.push(round);
    }
    expect(apart).toEqual([]);
  }, 60_000);
});

describe('a SET filled while the user follows', () => {
  it('600 rounds of a lost SET read back on three hosts while another follows or unfollows: the fill never misses the write', async () => {
    const [me, target] = [u[0]!, u[1]!];
    const apart: number[] = [];
    for (let round = 0; round < 600; round++) {
      await redis.del(keys.follows(me));
      const writer = hosts[round % hosts.length]!;
      const readers = [1, 2, 3].map((k) => hosts[(round + k) % hosts.length]!);
      const write = round % 2 === 0 ? follow(writer.db, writer.redis, me, target) : unfollow(writer.db, writer.redis, me, target);
      await Promise.all([write, ...readers.map((r) => followedIds(r.db, r.redis, me))]);
      const inDb = !!(await db.selectFrom('tb_follow').select('id').where('user_id', '=', me).where('follow_user_id', '=', target).executeTakeFirst());
      const inSet = (await redis.sismember(keys.follows(me), target)) === 1;
      if (inSet !== inDb) apart.push(round);
    }
    expect(apart).toEqual([]);
  }, 60_000);
});
