/**
 * The outbox sweeper: a crash between the grab script and the publish, or a
 * broker outage, leaves an accepted order only in `seckill:{vid}:pending`. Entries older than
 * OUTBOX_STALE_MS that are not in MySQL are published again (the worker dedups by order id);
 * entries already in MySQL (or recorded as failed) are removed. Each entry backs off
 * (stale × 2^republishes, capped) so a long queue backlog is not flooded with copies.
 *
 * Several workers may run: a short per-voucher claim (SET NX PX) lets one of them sweep a voucher
 * per interval. The claim is an economy, not a correctness lock — two sweeps at once only publish
 * duplicates, which the worker absorbs.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@/lib/redis/types';
import type { DB } from '@/lib/db/client';
import { log } from '@/lib/log';
import type { OrderMessage } from '@/lib/seckill/message';
import { deadLetterStatuses, existingOrderIds } from '@/lib/seckill/outbox.repository';
import { failedOrderIds } from '@/lib/seckill/failure.repository';
import { keys } from '@/lib/redis/keys';
import { expireEndedSale } from '@/lib/seckill/sale-expiry';
import { bucketCount } from '@/lib/seckill/buckets/count';
import { findBucketCount } from '@/lib/seckill/seckill.repository';
import { recoverMoves } from '@/lib/seckill/buckets/move';
import { bucketTags } from '@/lib/seckill/buckets/tags';
import { parsePendingEntry, pendingCount, redisNowMs, releaseOrder, removePendingEntries, scanPendingEntries, touchPendingEntry, type PendingEntry } from '@/lib/seckill/outbox';

export interface SweepDeps {
  db: DB;
  redis: RedisClient;
  publish: (msg: OrderMessage) => Promise<void>;
  staleMs: number;
  /** How long a voucher stays claimed by this sweep (about one sweep interval). */
  claimMs: number;
  /** The worker's counters (lib/order/metrics.ts), when a worker runs the sweep. */
  metrics?: { released: { inc(n?: number): void }; republished: { inc(n?: number): void } };
}

export interface SweepStats {
  vouchers: number;
  republished: number;
  removed: number;
  released: number;
  skippedDead: number;
}

/** Most entries one voucher's sweep handles; the rest wait for the next round. */
const MAX_DUE_PER_SWEEP = 5000;
const PUBLISH_CHUNK = 200;
/** A sale this long over with an empty outbox leaves the active set and its keys start to expire. */
const RETIRE_AFTER_END_MS = 60_000;

export async function sweepOutbox(deps: SweepDeps): Promise<SweepStats> {
  const stats: SweepStats = { vouchers: 0, republished: 0, removed: 0, released: 0, skippedDead: 0 };
  const token = randomBytes(8).toString('hex');
  for (const vid of await deps.redis.smembers(keys.seckillActive())) {
    const claimed = await deps.redis.set(keys.seckillSweep(vid), token, 'PX', deps.claimMs, 'NX');
    if (claimed !== 'OK') continue;
    stats.vouchers++;
    await sweepVoucher(deps, vid, stats);
  }
  return stats;
}

export function isDue(e: PendingEntry, nowMs: number, staleMs: number): boolean {
  return nowMs - (e.rt ?? e.at) >= staleMs * 2 ** Math.min(e.r ?? 0, 4);
}

async function sweepVoucher(deps: SweepDeps, vid: string, stats: SweepStats): Promise<void> {
  const { redis } = deps;
  // N from MySQL when bucket 0's meta is gone (its node lost it) and this process never learnt N:
  // guessing 1 would sweep bucket 0's outbox only and retire the sale while other buckets hold orders.
  const n = await bucketCount(redis, vid, () => findBucketCount(deps.db, vid));
  // A mover that died mid-move left units in a journal (docs/buckets.md#moving-stock): deliver them.
  if (n > 1) await recoverMoves(redis, vid, n).catch((err: Error) => log.warn({ voucherId: vid, err: err.message }, 'stock move recovery failed'));
  const now = await redisNowMs(redis);
  // Each bucket has its own outbox (its own slot); N = 1: just the voucher's.
  let due = 0;
  for (const tag of n === 1 ? [vid] : bucketTags(vid, n)) due += await sweepBucket(deps, vid, tag, now, stats);
  if (due === 0) await retireIfDone(redis, vid, n, now);
}

/** Sweeps one bucket's outbox (`tag`: the bucket's tag, the voucher id for bucket 0); returns how many entries were due. */
async function sweepBucket(deps: SweepDeps, vid: string, tag: string, now: number, stats: SweepStats): Promise<number> {
  const { db, redis } = deps;
  const due: PendingEntry[] = [];
  let cursor = '0';
  do {
    const [next, flat] = await scanPendingEntries(redis, tag, cursor, 1000);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const entry = parsePendingEntry(flat[i + 1]!);
      if (!entry) log.error({ voucherId: vid, orderId: flat[i] }, 'outbox entry is not an order message; left in place');
      else if (isDue(entry, now, deps.staleMs)) due.push(entry);
    }
    cursor = next;
  } while (cursor !== '0' && due.length < MAX_DUE_PER_SWEEP);

  if (due.length === 0) return 0;

  const ids = due.map((e) => e.orderId);
  // Written, or folded into the buyer's other order (whose unit it is): done either way.
  const [written, failed] = await Promise.all([existingOrderIds(db, ids), failedOrderIds(db, ids)]);
  const inDb = new Set([...written, ...[...failed].filter(([, why]) => why === 'ALREADY_BOUGHT').map(([id]) => id)]);
  if (inDb.size > 0) stats.removed += await removePendingEntries(redis, tag, inDb);
  const rest = due.filter((e) => !inDb.has(e.orderId));
  const dead = await deadLetterStatuses(db, rest.map((e) => e.orderId));

  const toPublish: PendingEntry[] = [];
  for (const e of rest) {
    const status = dead.get(e.orderId)?.status;
    if (status === 'dead') stats.skippedDead++; // waits for the admin: replay or discard
    // Discarded by the admin, or voided by a grab that answered 503 (UNCONFIRMED) but could not
    // give its unit back: never written, so the unit goes back.
    else if (status === 'discarded' || failed.get(e.orderId) === 'UNCONFIRMED') {
      if (await releaseOrder(redis, vid, e.orderId, e.userId)) {
        stats.released++;
        deps.metrics?.released.inc();
      }
    } else toPublish.push(e);
  }
  for (let i = 0; i < toPublish.length; i += PUBLISH_CHUNK) {
    const chunk = toPublish.slice(i, i + PUBLISH_CHUNK);
    await Promise.all(chunk.map((e) => deps.publish(e)));
    await Promise.all(chunk.map((e) => touchPendingEntry(redis, { ...e, r: (e.r ?? 0) + 1, rt: now })));
    stats.republished += chunk.length;
    deps.metrics?.republished.inc(chunk.length);
  }
  return due.length;
}

async function retireIfDone(redis: RedisClient, vid: string, n: number, now: number): Promise<void> {
  const tags = n === 1 ? [vid] : bucketTags(vid, n);
  const [ends, pending] = await Promise.all([Promise.all(tags.map((t) => redis.hget(keys.seckillMeta(t), 'end'))), Promise.all(tags.map((t) => pendingCount(redis, t)))]);
  // Every bucket's meta carries the window: a lost bucket 0 must not make a live sale look unended-and-unknown.
  const end = ends.find((e) => e !== null) ?? null;
  // No grab can be accepted after the end, so an empty outbox then stays empty.
  if (pending.every((p) => p === 0) && (end === null || Number(end) + RETIRE_AFTER_END_MS < now)) {
    await Promise.all(tags.map((t) => expireEndedSale(redis, t)));
    await redis.srem(keys.seckillActive(), vid);
  }
}
