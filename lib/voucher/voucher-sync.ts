/**
 * Keeping a voucher's Redis state in step with MySQL after an admin change. Every admin change
 * that touches Redis runs under one lock per voucher, so an edit, a preheat and an add-stock never
 * interleave (a preheat reading the old total while an edit lowers it would undo the edit).
 */
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { log } from '@/lib/log';
import { Backoff } from '@/lib/backoff';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { bucketCount } from '@/lib/seckill/buckets/count';
import { giveBackToBuckets, takeFromBuckets } from '@/lib/seckill/buckets/lower';
import { notifySeckillChanged } from '@/lib/seckill/refusal-memory';
import { AppError } from '@/lib/errors';
import { LockTimeoutError, withLock } from '@/lib/lock';
import { invalidateShopVouchers } from '@/lib/shop/shop.cache';
import { findVoucherRow } from '@/lib/voucher/voucher.repository';

export const voucherLockName = (voucherId: string) => `voucher-admin:${voucherId}`;

/**
 * One lock per voucher for the console's changes, so an edit, a preheat and an add-stock never
 * interleave. It lives where LOCK_BACKEND says (docs/locks.md); `signal` aborts if the lock is
 * lost while `fn` runs (lease not renewed, ZooKeeper session lost): check it before each write.
 */
export async function underVoucherLock<T>(voucherId: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await withLock(voucherLockName(voucherId), { leaseMs: 30_000, waitMs: 10_000 }, (signal) => fn(signal));
  } catch (e) {
    if (e instanceof LockTimeoutError) throw new AppError('CONFLICT', '该券正在被其他操作修改，请稍后重试');
    throw e;
  }
}
/**
 * Re-preheats after a committed DB change (window, take-down, new voucher). MySQL is the truth
 * and preheat is idempotent, so a Redis failure here is reported, not rolled back: the console
 * shows "not in sync" and the preheat button repairs it.
 */
export async function syncRedis(db: Executor, redis: RedisClient, voucherId: string): Promise<boolean> {
  try {
    await preheatVoucher(db, redis, voucherId);
    return true;
  } catch (err) {
    log.error({ err, voucherId }, 'voucher preheat after admin change failed');
    return false;
  }
}

const IN_REQUEST_RETRIES_MS = [100, 300, 900];
const BACKGROUND_MAX_DELAY_MS = 30_000;
const retrying = new Set<string>();

/**
 * For changes that close or move a sale window (take-down, window edit): Redis must agree, or it
 * keeps selling what MySQL closed. Retries a few times within the request; if Redis still does
 * not answer, keeps retrying in the background (backoff up to 30 s, one loop per voucher) until it
 * does. Meanwhile the worker refuses orders grabbed outside MySQL's window, so nothing sold in the
 * gap becomes an order. Returns whether Redis agreed before the answer went out.
 */
export async function syncRedisUntilAgreed(db: Executor, redis: RedisClient, voucherId: string): Promise<boolean> {
  if (await syncRedis(db, redis, voucherId)) return true;
  for (const ms of IN_REQUEST_RETRIES_MS) {
    await new Promise((r) => setTimeout(r, ms));
    if (await syncRedis(db, redis, voucherId)) return true;
  }
  if (!retrying.has(voucherId)) {
    retrying.add(voucherId);
    void (async () => {
      const backoff = new Backoff(1000, BACKGROUND_MAX_DELAY_MS);
      while (!(await syncRedisLocked(db, redis, voucherId))) await backoff.sleep(true);
      retrying.delete(voucherId);
      log.info({ voucherId }, 'Redis agrees with MySQL again after an admin change');
    })();
  }
  return false;
}

/** syncRedis for a caller not already holding the voucher lock; false if Redis is unreachable. */
export async function syncRedisLocked(db: Executor, redis: RedisClient, voucherId: string): Promise<boolean> {
  return underVoucherLock(voucherId, () => syncRedis(db, redis, voucherId)).catch((err: unknown) => {
    log.error({ err, voucherId }, 'voucher lock for preheat failed');
    return false;
  });
}

/**
 * Redis half of lowering the total stock by `units`: 'short' (less unsold than asked, nothing
 * taken), 'absent' (not preheated), or 'ok' with `giveBack`, which undoes it when MySQL then refuses.
 * A bucketed sale gives up units from every bucket, richest first (lib/seckill/buckets/lower.ts).
 */
export async function takeRedisStock(redis: RedisClient, voucherId: string, units: number, fromDb?: () => Promise<number | null>): Promise<{ status: 'ok'; giveBack: () => Promise<void> } | { status: 'short' | 'absent' }> {
  // N from MySQL (fromDb) when bucket 0's meta is lost: a guess of 1 would call the sale "absent"
  // and let MySQL's guard lower it below the grabs the other buckets accepted and not yet written.
  const n = await bucketCount(redis, voucherId, fromDb);
  if (n > 1) {
    const r = await takeFromBuckets(redis, voucherId, n, units);
    if (r.status !== 'ok') return r;
    return { status: 'ok', giveBack: () => giveBackToBuckets(redis, voucherId, n, r.taken).then(() => notifySeckillChanged(redis, voucherId)) };
  }
  const shift = (delta: number) => runScript<number>(redis, 'voucher-shift-stock', [keys.seckillMeta(voucherId), keys.seckillStock(voucherId)], [delta]);
  const r = await shift(-units);
  if (r === -1) return { status: 'short' };
  if (r < 0) return { status: 'absent' };
  // The units were on sale a moment ago: a process that learned "sold out" meanwhile must forget it.
  return { status: 'ok', giveBack: () => shift(units).then(() => notifySeckillChanged(redis, voucherId)) };
}

/**
 * After any committed voucher change: the shop page's cached voucher list must not show the old
 * one. Never throws (MySQL is already right; the list entry expires on its own within a minute).
 */
export async function afterVoucherWrite(db: Executor, redis: RedisClient, voucherId: string): Promise<void> {
  try {
    const row = await findVoucherRow(db, voucherId);
    if (row) await invalidateShopVouchers(redis, row.shop_id);
  } catch (err) {
    log.warn({ err, voucherId }, 'could not drop the shop voucher cache after a voucher change');
  }
}
