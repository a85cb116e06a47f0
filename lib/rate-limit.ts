/**
 * Fixed-window rate limits in Redis (rate-limiter-flexible), shared by every instance. Each
 * limiter is named in `limits` so its numbers live in one place; `RATE_LIMITS=false` turns them
 * all off (load tests log thousands of users in from one address).
 */
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { allKeys, deleteKeys } from '@/lib/redis/keyspace';
import type { RedisClient } from '@/lib/redis/types';
import { log } from '@/lib/log';

const limits = {
  smsPhoneCooldown: { points: 1, duration: env.SMS_COOLDOWN_SECONDS, message: '验证码发送太频繁，请稍后再试' },
  /** Codes of one phone asked by one client (an address, or a login device of that phone). */
  smsPhoneClientDaily: { points: env.SMS_DAILY_MAX, duration: 24 * 3600, message: '今日验证码发送次数已达上限' },
  /** Codes of one phone asked by every client without a login device of it: the phone's ceiling, out of one stranger's reach. */
  smsPhoneDaily: { points: env.SMS_PHONE_DAILY_MAX, duration: 24 * 3600, message: '该手机号今日验证码发送次数已达上限' },
  smsIpHourly: { points: env.SMS_IP_HOURLY_MAX, duration: 3600, message: '该网络请求验证码过于频繁' },
  /** Password tries of one phone from one client, counted before the check (the owner elsewhere is unaffected). */
  passwordLoginPhoneClient: { points: 10, duration: 15 * 60, message: '密码错误次数过多，请 15 分钟后再试' },
  /** Password tries of one client across phones (credential stuffing). */
  passwordLoginClient: { points: 100, duration: 15 * 60, message: '登录尝试过于频繁，请稍后再试' },
  /** Password tries of one phone from a device it logged in on before (lib/auth/login-device.ts), instead of the per-client and per-phone limits. */
  passwordLoginDevice: { points: 10, duration: 15 * 60, message: '密码错误次数过多，请 15 分钟后再试' },
  /** Wrong passwords of one phone from everywhere: a slow ceiling, reached only by many clients at once (not checked for its known devices). */
  passwordLoginPhone: { points: 200, duration: 3600, message: '该账号近期密码错误次数过多，请稍后再试' },
  seckillUser: { points: env.SECKILL_USER_PER_SECOND, duration: 1, message: '操作太快了，请稍后再试' },
  /** Grabs of one user, any vouchers, of a voucher Redis does not know (each reads MySQL): a person meets a cold sale once; a script walking made-up ids meets this. */
  grabColdUser: { points: 20, duration: 10, message: '请求过于频繁，请稍后再试' },
  /** Public reads per client (shops, notes, profiles, follow lists: each reads MySQL on a miss): generous for people, a wall for scrapers walking random ids. */
  shopReadIp: { points: 300, duration: 10, message: '请求过于频繁，请稍后再试' },
  seckillIp: { points: env.SECKILL_IP_PER_SECOND, duration: 1, message: '请求过于频繁，请稍后再试' },
  /** Console writes (vouchers, shops, dead letters, redeem, refunds, roles) of one merchant or admin: far above what a person clicks. */
  consoleWriteUser: { points: 300, duration: 60, message: '操作太频繁，请稍后再试' },
  /**
   * Order reads of one user (one order, or a page of them): each reads MySQL, an unknown id up to
   * four times. The pages poll a pending order at most ~2 a second; a script walking ids, or one
   * account on many connections keeping the hot server's slots busy with MySQL reads during a
   * sale, meets this.
   */
  orderReadUser: { points: 300, duration: 60, message: '刷新太频繁，请稍后再试' },
  /** Pay, cancel and refund requests of one user's orders. */
  orderWriteUser: { points: 60, duration: 60, message: '操作太频繁，请稍后再试' },
  /** Payment provider callbacks per client address: a flood of unsigned notifies is cut off; the provider retries a 429. */
  paymentNotifyClient: { points: 2000, duration: 10, message: '请求过于频繁，请稍后再试' },
  /** Normal-voucher buys of one user (every buy writes an order and schedules its timeout). */
  voucherBuyUser: { points: 30, duration: 60, message: '下单太频繁，请稍后再试' },
  uploadUser: { points: 100, duration: 3600, message: '上传太频繁，请稍后再试' },
  blogWriteUser: { points: 30, duration: 3600, message: '发布太频繁，请稍后再试' },
  /** Edits and deletions of one's notes. */
  blogEditUser: { points: 60, duration: 3600, message: '操作太频繁，请稍后再试' },
  /** Like toggles of one user, any notes: a person taps far fewer in a minute. */
  likeUser: { points: 60, duration: 60, message: '点赞太频繁，请稍后再试' },
  /** Follows and unfollows of one user. */
  followUser: { points: 60, duration: 60, message: '关注操作太频繁，请稍后再试' },
  /** Sign-in posts of one user (one per day counts; repeats are no-ops that still cost a write path). */
  signUser: { points: 10, duration: 60, message: '操作太频繁，请稍后再试' },
  /** Reservations and their cancels of one user, any sales (docs/fair-sale.md#reserving): a person taps a few. */
  reserveUser: { points: 20, duration: 60, message: '预约操作太频繁，请稍后再试' },
  /** Waitlist joins, leaves and offer claims of one user, any sales (docs/fair-sale.md#waitlist). */
  waitlistUser: { points: 20, duration: 60, message: '候补操作太频繁，请稍后再试' },
  shopViewIp: { points: 300, duration: 60, message: '请求过于频繁，请稍后再试' },
  /** Waiting-room joins and polls of one user, any sales (docs/fair-sale.md#the-waiting-room): the page polls at most once a second. */
  roomUser: { points: 120, duration: 60, message: '刷新太频繁，请稍后再试' },
  /** Bot-gate challenges and grab-token requests of one user, any sales: a person needs a handful. */
  roomGateUser: { points: 30, duration: 60, message: '操作太频繁，请稍后再试' },
} as const;

export type LimitName = keyof typeof limits;

/** A limit's points per window, for tests that walk every route (e2e/hostile/write-limits.test.ts). */
export const limitPoints = (name: LimitName): number => limits[name].points;

/** For limits counted elsewhere (the grab script counts its own, in the voucher's slot). */
export const limitMessages = { seckillUser: limits.seckillUser.message, seckillIp: limits.seckillIp.message };

const limiters = new Map<LimitName, RateLimiterRedis>();

function limiter(name: LimitName): RateLimiterRedis {
  let l = limiters.get(name);
  if (!l) {
    const { points, duration } = limits[name];
    l = new RateLimiterRedis({ storeClient: redis, keyPrefix: keys.rateLimit(name), points: Math.max(points, 1), duration });
    limiters.set(name, l);
  }
  return l;
}

/** Consumes one point; throws RATE_LIMITED (429 + Retry-After) when the window is used up. */
export async function consume(name: LimitName, key: string): Promise<void> {
  if (!env.RATE_LIMITS) return;
  try {
    await limiter(name).consume(key);
  } catch (e) {
    if (e instanceof RateLimiterRes) {
      throw new AppError('RATE_LIMITED', limits[name].message, { retryAfter: e.msBeforeNext / 1000 });
    }
    throw e;
  }
}

/** Throws RATE_LIMITED when the window is already used up, without consuming a point. */
export async function ensureNotBlocked(name: LimitName, key: string): Promise<void> {
  if (!env.RATE_LIMITS) return;
  const res = await limiter(name).get(key);
  if (res && res.remainingPoints <= 0) throw new AppError('RATE_LIMITED', limits[name].message, { retryAfter: res.msBeforeNext / 1000 });
}

/** Gives a point back (e.g. a code send that failed downstream should not count). */
export async function refund(name: LimitName, key: string): Promise<void> {
  if (!env.RATE_LIMITS) return;
  await limiter(name).reward(key).catch(() => {});
}

export async function resetLimit(name: LimitName, key: string): Promise<void> {
  await limiter(name).delete(key).catch(() => {});
}

/**
 * Forgets the counts of one limit for every key at once, through `client` (a caller's own
 * connection: the browser suite's, whose logins all come from one address). Walks the keyspace:
 * tests and tooling only. The number of counts forgotten.
 */
export async function forgetLimit(name: LimitName, client: RedisClient = redis): Promise<number> {
  // rate-limiter-flexible stores a key's count at `<keyPrefix>:<key>`.
  const counted = await allKeys(client, `${keys.rateLimit(name)}:*`);
  return counted.length > 0 ? deleteKeys(client, counted) : 0;
}

let lastOpenWarn = 0;

/**
 * For limits on reads that keep working without Redis (the shop pages fall back to MySQL through
 * lib/cache, whose own per-process cap protects the database): when Redis does not answer within
 * CACHE_REDIS_TIMEOUT_MS the limit is skipped, not turned into an error page. A real refusal
 * (429) still throws.
 */
export async function consumeUnlessRedisDown(name: LimitName, key: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const down = Symbol('down');
  const outcome = await Promise.race([
    consume(name, key).then(
      () => undefined,
      (e: unknown) => (e instanceof AppError ? Promise.reject(e) : down),
    ),
    new Promise<typeof down>((r) => (timer = setTimeout(() => r(down), env.CACHE_REDIS_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  if (outcome === down && Date.now() - lastOpenWarn > 5000) {
    lastOpenWarn = Date.now();
    log.warn({ limit: name }, 'rate limit skipped: Redis is not answering');
  }
}
