/**
 * forgetLimit on real Redis: every key's count of the named limit is forgotten (the browser suite's
 * logins, all from 127.0.0.1, each start the per-address SMS count afresh with it), through the
 * caller's own connection, and no other limit's count is touched.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomInt } from 'node:crypto';
import { closeRedis, createRedis } from '@/lib/redis/client';
import { consume, forgetLimit, limitPoints, resetLimit } from '@/lib/rate-limit';

afterAll(closeRedis);

/** Uses up a limit's window for `key`: the next consume is refused. */
async function useUp(name: 'smsIpHourly' | 'passwordLoginClient', key: string): Promise<void> {
  for (let i = 0; i < limitPoints(name); i++) await consume(name, key);
  await expect(consume(name, key)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
}

describe('forgetLimit', () => {
  it('forgets every key of the named limit, through the given client, and no other limit', async () => {
    const block = `198.18.${randomInt(0, 256)}`;
    const [a, b, c] = [`${block}.1`, `${block}.2`, `${block}.3`];
    await Promise.all([useUp('smsIpHourly', a), useUp('smsIpHourly', b), useUp('passwordLoginClient', a)]);
    const own = createRedis();
    try {
      expect(await forgetLimit('smsIpHourly', own)).toBeGreaterThanOrEqual(2);
    } finally {
      own.disconnect();
    }
    await consume('smsIpHourly', a);
    await consume('smsIpHourly', b);
    await expect(consume('passwordLoginClient', a)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    // The process's own connection is the default.
    await useUp('smsIpHourly', c);
    await forgetLimit('smsIpHourly');
    await consume('smsIpHourly', c);
    await Promise.all([...[a, b, c].map((k) => resetLimit('smsIpHourly', k)), resetLimit('passwordLoginClient', a)]);
  });
});
