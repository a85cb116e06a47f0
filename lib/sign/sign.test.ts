/** Sign-in: Beijing days (month ends, midnight UTC+8), repeated sign-ins, streaks across months, rebuild. */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { beijingDay } from '@/lib/sign/beijing-day';
import { signIn, signStatus } from '@/lib/sign/sign.service';
import { makeUsers } from '@/e2e/support/fixtures/blog';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const at = (iso: string) => new Date(iso);

describe('Beijing day', () => {
  it('counts the day in UTC+8', () => {
    expect(beijingDay(at('2026-01-31T15:59:59.999Z')).iso).toBe('2026-01-31'); // 23:59:59 Beijing
    expect(beijingDay(at('2026-01-31T16:00:00.000Z')).iso).toBe('2026-02-01'); // 00:00 Beijing
    expect(beijingDay(at('2028-02-28T16:30:00Z'))).toMatchObject({ iso: '2028-02-29', daysInMonth: 29, yyyyMM: '202802' });
    expect(beijingDay(at('2026-12-31T16:00:00Z')).iso).toBe('2027-01-01');
  });
});

describe('sign-in', () => {
  it('signs the last day of a month and across midnight Beijing time into the right bits', async () => {
    const [user] = await makeUsers(db, 1, 'signer');
    const lastOfJan = await signIn(db, redis, user!, at('2026-01-31T15:59:00Z')); // 23:59 on Jan 31 in Beijing
    expect(lastOfJan).toMatchObject({ today: '2026-01-31', signedToday: true, already: false, days: [31], daysInMonth: 31, streak: 1 });
    expect(await redis.getbit(keys.sign(user!, '202601'), 30)).toBe(1);

    const again = await signIn(db, redis, user!, at('2026-01-31T15:59:30Z'));
    expect(again).toMatchObject({ already: true, days: [31], streak: 1 });

    const firstOfFeb = await signIn(db, redis, user!, at('2026-01-31T16:01:00Z')); // 00:01 on Feb 1 in Beijing, still Jan 31 in UTC
    expect(firstOfFeb).toMatchObject({ today: '2026-02-01', already: false, days: [1], daysInMonth: 28, streak: 2 });
    expect(await redis.getbit(keys.sign(user!, '202602'), 0)).toBe(1);
  });

  it('the streak counts back from today (or yesterday) and stops at a gap', async () => {
    const [user] = await makeUsers(db, 1, 'streak');
    for (const d of ['03', '05', '06', '07']) await signIn(db, redis, user!, at(`2026-03-${d}T04:00:00Z`));
    expect((await signStatus(db, redis, user!, at('2026-03-07T10:00:00Z'))).streak).toBe(3);
    expect(await signStatus(db, redis, user!, at('2026-03-08T10:00:00Z'))).toMatchObject({ signedToday: false, streak: 3 });
    expect((await signStatus(db, redis, user!, at('2026-03-09T10:00:00Z'))).streak).toBe(0);
    expect((await signStatus(db, redis, user!, at('2026-03-09T10:00:00Z'))).days).toEqual([3, 5, 6, 7]);
  });

  it('a lost bitmap is rebuilt from tb_sign', async () => {
    const [user] = await makeUsers(db, 1, 'rebuild');
    for (const d of ['28', '29', '30']) await signIn(db, redis, user!, at(`2026-04-${d}T04:00:00Z`));
    await signIn(db, redis, user!, at('2026-05-01T04:00:00Z'));
    await redis.del(keys.sign(user!, '202604'), keys.sign(user!, '202605'));
    expect(await signStatus(db, redis, user!, at('2026-05-01T08:00:00Z'))).toMatchObject({ days: [1], streak: 4 });
  });
});
