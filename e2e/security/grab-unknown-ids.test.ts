/**
 * Grabs of made-up voucher ids. The grab's own limits live in the voucher's slot (per voucher, per
 * second), so one consumer grabbing a different made-up id each time was never limited, and every
 * such grab cost the grab script and a MySQL read (the script answers "unknown", the route looks
 * for the sale to preheat it). Such cold grabs are now counted per user across vouchers
 * (`grabColdUser`, 20 per 10 s). Found by a review helper: 50 distinct ids, 0 refused, 50 reads.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { limitPoints } from '@/lib/rate-limit';
import { callRoute } from '@/e2e/support/helpers';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { createTestUsers, createTestVoucher, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

afterAll(async () => {
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const madeUp = () => `7${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;

describe('grabs of made-up voucher ids', () => {
  it('one user walking new ids is limited across vouchers; another user and a real sale are not', async () => {
    expect(env.RATE_LIMITS, 'this proof needs the limits on').toBe(true);
    const [walker, other] = await createTestUsers(db, redis, 2);
    const grab = (token: string, voucherId: string) => callRoute(grabRoute, { method: 'POST', token, params: { voucherId } });
    const allowed = limitPoints('grabColdUser');
    const answers = await Promise.all(Array.from({ length: allowed + 30 }, () => grab(walker!.token, madeUp())));
    const statuses = answers.map((r) => r.status);
    // Each allowed one was looked for (404); the rest refused before any MySQL read.
    expect(statuses.filter((s) => s === 404)).toHaveLength(allowed);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    // Someone else is counted on their own, and a real sale that Redis does not hold yet (created
    // without a preheat) still sells to its first grab.
    expect((await grab(other!.token, madeUp())).status).toBe(404);
    const cold = await createTestVoucher(db, redis, { stock: 1, preheat: false });
    expect((await grab(other!.token, cold)).status).toBe(200);
  });
});
