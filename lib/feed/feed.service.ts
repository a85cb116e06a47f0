/**
 * Reading the feed: scroll paging over the inbox ZSET by (max score, offset), newest first.
 * A page is ZREVRANGEBYSCORE inbox max -inf LIMIT offset count; the next cursor is the smallest
 * score on the page and how many entries on the page carry it (plus the previous offset when the
 * whole page shares the cursor's score). Notes pushed meanwhile have larger scores and never shift
 * the pages already read, and notes with equal timestamps are neither skipped nor repeated.
 * Entries whose note was deleted are skipped and the page reads on (bounded) to fill itself; they
 * stay in the inbox (removing them would shift the offsets of a scroll in progress) until the cap
 * ages them out.
 */
import type { DB } from '@/lib/db/client';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import { findBlogsByIds, type BlogRow } from '@/lib/blog/blog.repository';
import { likedByUser } from '@/lib/blog/like';
import { toBlogView, type BlogView } from '@/lib/blog/blog.view';
import { followedIds } from '@/lib/follow/follow.service';

export const FEED_PAGE_SIZE = 10;

export interface FeedCursor {
  max: number;
  offset: number;
}

export interface ScrollPage {
  ids: string[];
  /** null when this page reached the end. */
  next: FeedCursor | null;
}

/** One page of blog ids from the inbox: the raw scroll step, separate from loading notes. */
export async function scrollInbox(redis: RedisClient, userId: string, cursor: FeedCursor | null, count = FEED_PAGE_SIZE): Promise<ScrollPage> {
  const max = cursor ? String(cursor.max) : '+inf';
  const offset = cursor?.offset ?? 0;
  const flat = await redis.zrevrangebyscore(keys.feed(userId), max, '-inf', 'WITHSCORES', 'LIMIT', offset, count);
  const ids: string[] = [];
  let minScore = 0;
  let sameAsMin = 0;
  for (let i = 0; i < flat.length; i += 2) {
    const score = Number(flat[i + 1]);
    ids.push(flat[i]!);
    if (score === minScore) sameAsMin++;
    else {
      minScore = score;
      sameAsMin = 1;
    }
  }
  if (ids.length < count) return { ids, next: null };
  // When every entry of the page has the cursor's own score, skip past the earlier ones too.
  const nextOffset = cursor && minScore === cursor.max ? sameAsMin + offset : sameAsMin;
  return { ids, next: { max: minScore, offset: nextOffset } };
}

/**
 * Inbox entries read for one answer at most: a page whose notes were deleted reads on until it
 * has FEED_PAGE_SIZE notes, the inbox ends, or this many entries were read. An answer can then be
 * empty with a cursor: that is "read on", never "nothing here".
 */
export const FEED_SCAN_MAX = 5 * FEED_PAGE_SIZE;

export async function readFeed(
  db: DB,
  redis: RedisClient,
  userId: string,
  cursor: FeedCursor | null,
): Promise<{ items: BlogView[]; next: FeedCursor | null }> {
  const rows: BlogRow[] = [];
  let next = cursor;
  let scanned = 0;
  // An unfollow takes the author's notes out of the feed at once, not only later deliveries:
  // like a deleted note, left out of pages here (taking them out of the inbox would shift offsets).
  const following = await followedIds(db, redis, userId);
  do {
    // Ask only for what is missing, so a full answer stops exactly where its last note is.
    const want = Math.min(FEED_PAGE_SIZE - rows.length, FEED_SCAN_MAX - scanned);
    const page = await scrollInbox(redis, userId, next, want);
    scanned += page.ids.length;
    const found = new Map((await findBlogsByIds(db, page.ids)).map((r) => [r.id, r]));
    for (const id of page.ids) {
      const r = found.get(id);
      if (r && (following.has(String(r.user_id)) || String(r.user_id) === userId)) rows.push(r);
    }
    next = page.next;
  } while (next && rows.length < FEED_PAGE_SIZE && scanned < FEED_SCAN_MAX);
  const liked = await likedByUser(db, redis, rows, userId);
  return { items: rows.map((r) => toBlogView(r, liked.has(r.id))), next };
}
