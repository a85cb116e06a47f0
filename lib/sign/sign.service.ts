/**
 * Daily sign-in (签到): one bit per Beijing day in sign:{userId}:{yyyyMM} (bit 0 = the 1st), with
 * tb_sign as the durable record the bitmap is rebuilt from when Redis lost it. The month is read
 * in one BITFIELD GET (u<daysInMonth> at 0); the streak counts set bits back from today (or from
 * yesterday while today is not signed yet), continuing into earlier months' bitmaps.
 */
import type { Executor } from '@/lib/db/client';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import { beijingDay, lastDayOfPreviousMonth, type BeijingDay } from '@/lib/sign/beijing-day';
import { insertSign, signedDaysOfMonth } from '@/lib/sign/sign.repository';

/** A month's bitmap outlives its month by a year (the streak may reach back into it). */
const SIGN_TTL_SECONDS = 400 * 24 * 3600;
/** How many months back a streak is followed. */
const STREAK_MONTHS = 12;

export interface SignStatus {
  today: string;
  signedToday: boolean;
  /** Signed days of this month, 1-based. */
  days: number[];
  daysInMonth: number;
  streak: number;
}

async function ensureMonth(db: Executor, redis: RedisClient, userId: string, m: BeijingDay): Promise<string> {
  const key = keys.sign(userId, m.yyyyMM);
  if ((await redis.exists(key)) === 1) return key;
  const days = await signedDaysOfMonth(db, userId, m.year, m.month);
  if (days.length > 0) {
    const multi = redis.multi();
    for (const d of days) multi.setbit(key, d - 1, 1);
    multi.expire(key, SIGN_TTL_SECONDS);
    await multi.exec();
  }
  return key;
}

/** The month's bits as a number: bit (daysInMonth - day) is the day's bit. */
async function monthBits(db: Executor, redis: RedisClient, userId: string, m: BeijingDay): Promise<number> {
  const key = await ensureMonth(db, redis, userId, m);
  const [bits] = (await redis.bitfield(key, 'GET', `u${m.daysInMonth}`, 0)) as number[];
  return Number(bits ?? 0);
}

const bitOf = (bits: number, m: BeijingDay, day: number) => Math.floor(bits / 2 ** (m.daysInMonth - day)) % 2 === 1;

export async function signIn(db: Executor, redis: RedisClient, userId: string, now = new Date()): Promise<SignStatus & { already: boolean }> {
  const today = beijingDay(now);
  const inserted = await insertSign(db, userId, today.iso);
  const key = await ensureMonth(db, redis, userId, today);
  await redis.setbit(key, today.day - 1, 1);
  await redis.expire(key, SIGN_TTL_SECONDS);
  return { ...(await signStatus(db, redis, userId, now)), already: !inserted };
}

export async function signStatus(db: Executor, redis: RedisClient, userId: string, now = new Date()): Promise<SignStatus> {
  const today = beijingDay(now);
  const bits = await monthBits(db, redis, userId, today);
  const days: number[] = [];
  for (let d = 1; d <= today.daysInMonth; d++) if (bitOf(bits, today, d)) days.push(d);
  const signedToday = bitOf(bits, today, today.day);
  return { today: today.iso, signedToday, days, daysInMonth: today.daysInMonth, streak: await streak(db, redis, userId, today, bits, signedToday) };
}

async function streak(db: Executor, redis: RedisClient, userId: string, today: BeijingDay, todayBits: number, signedToday: boolean): Promise<number> {
  let count = 0;
  let month = today;
  let bits = todayBits;
  let day = signedToday ? today.day : today.day - 1;
  for (let m = 0; m <= STREAK_MONTHS; m++) {
    while (day >= 1 && bitOf(bits, month, day)) {
      count++;
      day--;
    }
    if (day >= 1) return count; // a gap inside this month
    month = lastDayOfPreviousMonth(month);
    bits = await monthBits(db, redis, userId, month);
    day = month.daysInMonth;
  }
  return count;
}
