/**
 * A note by an author with 50,000 followers: the publish call returns in < 100 ms (the fan-out is
 * the worker's, through RabbitMQ), then the consumer puts it in every inbox exactly once. The
 * fan-out rate is printed. Unfollow stops later deliveries; a deleted note leaves the feed; a
 * note whose publish the broker never took is republished by the worker's sweeper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeMq } from '@/lib/mq/connection';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { deleteKeys } from '@/lib/redis/keyspace';
import type { SessionUser } from '@/lib/auth/session';
import { createBlog, deleteBlog } from '@/lib/blog/blog.service';
import { follow, unfollow } from '@/lib/follow/follow.service';
import { startFeedConsumer, type FeedConsumer } from '@/lib/feed/consumer';
import { publishFeed } from '@/lib/blog/feed-publish';
import { readFeed } from '@/lib/feed/feed.service';
import type { FanoutResult } from '@/lib/feed/fanout';
import { cleanupSocialFixtures, makeShop, makeUsers, storedImageName, uploadedImageName } from '@/e2e/support/fixtures/blog';

const FOLLOWERS = 50_000;
/** Synthetic follower ids far above any real user id: tb_follow needs no tb_user row. */
const BASE = 9_000_000_000_000;
const followerIds = Array.from({ length: FOLLOWERS }, (_, i) => String(BASE + i));

let author: SessionUser;
let shopId = '';
let image = '';
let consumer: FeedConsumer;
const delivered = new Map<string, FanoutResult & { ms: number }>();
const waiters: (() => void)[] = [];

async function deliveredFor(blogId: string, timeoutMs = 60_000): Promise<FanoutResult & { ms: number }> {
  const deadline = Date.now() + timeoutMs;
  while (!delivered.has(blogId)) {
    if (Date.now() > deadline) throw new Error(`fan-out of ${blogId} not seen within ${timeoutMs} ms`);
    await new Promise<void>((r) => {
      waiters.push(r);
      setTimeout(r, 200);
    });
  }
  return delivered.get(blogId)!;
}

beforeAll(async () => {
  const [a] = await makeUsers(db, 1, 'author');
  author = { id: a!, nickName: 'author', icon: '', role: 'user' };
  shopId = await makeShop();
  image = await storedImageName();
  for (let i = 0; i < FOLLOWERS; i += 5000) {
    await db.insertInto('tb_follow').values(followerIds.slice(i, i + 5000).map((f) => ({ user_id: f, follow_user_id: author.id }))).execute();
  }
  consumer = await startFeedConsumer({
    prefetch: 1,
    sweepIntervalMs: 1000,
    sweepStaleMs: 5000,
    onDelivered: (r) => {
      delivered.set(r.blogId, r);
      waiters.splice(0).forEach((w) => w());
    },
  });
  // The web process keeps its broker connection; open it once before timing a publish.
  await publishFeed({ blogId: '987654321987', authorId: author.id, at: Date.now() });
}, 120_000);

afterAll(async () => {
  await cleanupSocialFixtures();
  await consumer?.stop();
  await deleteKeys(redis, followerIds.map((f) => keys.feed(f)));
  await db.deleteFrom('tb_follow').where('follow_user_id', '=', author.id).execute();
  await closeMq();
  await closeDb();
  await closeRedis();
});

async function inboxesHolding(blogId: string): Promise<number> {
  let n = 0;
  for (let i = 0; i < FOLLOWERS; i += 5000) {
    const scores = await Promise.all(followerIds.slice(i, i + 5000).map((f) => redis.zscore(keys.feed(f), blogId)));
    n += scores.filter((s) => s !== null).length;
  }
  return n;
}

describe('feed fan-out through RabbitMQ', () => {
  it('50,000 followers: publish returns in < 100 ms, then every inbox holds the note exactly once', async () => {
    const started = performance.now();
    const { id, fanout } = await createBlog(db, author, { shopId, title: '五万粉丝的新笔记', content: '来看看', images: [await uploadedImageName(author.id)] });
    const publishMs = performance.now() - started;
    expect(fanout).toBe('queued');
    expect(publishMs).toBeLessThan(100);

    const r = await deliveredFor(id);
    expect(r.followers).toBe(FOLLOWERS);
    expect(r.delivered).toBe(FOLLOWERS);
    expect(await inboxesHolding(id)).toBe(FOLLOWERS);
    console.log(`[feed] publish ${publishMs.toFixed(1)} ms; fan-out to ${FOLLOWERS} inboxes in ${r.ms} ms = ${Math.round((FOLLOWERS / r.ms) * 1000)} inboxes/s`);

    // A redelivery (at-least-once) changes nothing: same member, same score.
    const sample = followerIds[123]!;
    const before = await redis.zrange(keys.feed(sample), 0, -1, 'WITHSCORES');
    const row = await db.selectFrom('tb_blog').select('create_time').where('id', '=', id).executeTakeFirstOrThrow();
    await publishFeed({ blogId: id, authorId: author.id, at: row.create_time.getTime() });
    delivered.delete(id);
    expect((await deliveredFor(id)).delivered).toBe(0);
    expect(await redis.zrange(keys.feed(sample), 0, -1, 'WITHSCORES')).toEqual(before);
  });

  it('an unfollow stops later deliveries and hides what came before; a deleted note disappears from the feed', async () => {
    const [reader] = await makeUsers(db, 1, 'reader');
    await follow(db, redis, reader!, author.id);
    const first = await createBlog(db, author, { shopId, title: '关注后的第一篇', content: '一', images: [await uploadedImageName(author.id)] });
    await deliveredFor(first.id);
    expect((await readFeed(db, redis, reader!, null)).items.map((b) => b.id)).toContain(first.id);

    await unfollow(db, redis, reader!, author.id);
    const second = await createBlog(db, author, { shopId, title: '取关后的第二篇', content: '二', images: [await uploadedImageName(author.id)] });
    await deliveredFor(second.id);
    expect(await redis.zscore(keys.feed(reader!), second.id)).toBeNull(); // not delivered
    expect((await readFeed(db, redis, reader!, null)).items.map((b) => b.id)).not.toContain(first.id); // and the earlier one hidden

    await follow(db, redis, reader!, author.id); // followed again: what the inbox holds shows again
    expect((await readFeed(db, redis, reader!, null)).items.map((b) => b.id)).toContain(first.id);
    await deleteBlog(db, redis, author, first.id);
    expect((await readFeed(db, redis, reader!, null)).items.map((b) => b.id)).not.toContain(first.id);
  });

  it('a note saved while the broker refused the publish is fanned out by the sweeper', async () => {
    const [reader] = await makeUsers(db, 1, 'latecomer');
    await follow(db, redis, reader!, author.id);
    // As createBlog leaves it when publishFeed throws: the row, no message, fanout_at NULL.
    const r = await db
      .insertInto('tb_blog')
      .values({ shop_id: shopId, user_id: author.id, title: '发布时 MQ 挂了', content: '补发', images: image, create_time: new Date(Date.now() - 60_000) })
      .executeTakeFirstOrThrow();
    const id = String(r.insertId);
    await deliveredFor(id, 20_000);
    expect(await redis.zscore(keys.feed(reader!), id)).not.toBeNull();
    expect(await inboxesHolding(id)).toBe(FOLLOWERS);
    const row = await db.selectFrom('tb_blog').select('fanout_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.fanout_at).not.toBeNull();
    await unfollow(db, redis, reader!, author.id);
  });
});
