/**
 * The grab path end to end in-process: real route handler, real Redis/Lua, real RabbitMQ and an
 * in-process order worker writing real MySQL. Every test ends on the flash-sale invariants (docs/flash-sale.md#invariants).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// One user firing 50 grabs at once must reach the Lua script, not stop at the per-user limit.
// These tests prove the script's own decisions (limits before the window, buyer before stock), so
// the per-process refusal memory, which answers remembered refusals before the script and its
// limits, is off here; e2e/routes/seckill/refusal-memory.test.ts proves it.
const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ SECKILL_USER_PER_SECOND: '100', SECKILL_REFUSAL_MEMORY_MS: '0' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, createTestVoucher, waitDrained, type TestUser } from '@/e2e/support/fixtures/seckill';

let ipBlock = Math.floor(Math.random() * 200);

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

/** A distinct client address per user, so the per-IP limit is not what the test measures. */
function ipFor(i: number): string {
  return `10.${ipBlock}.${(i >> 8) & 255}.${i & 255}`;
}

const grab = (u: TestUser, voucherId: string, ip: string, extra: Parameters<typeof callRoute>[1] = {}) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: ip }, ...extra });

describe('POST /api/seckill/{voucherId}', () => {
  it('1000 users × 2 grabs at once against stock 100: exactly 100 orders, nobody twice', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 100 });
    const users = await createTestUsers(db, redis, 1000);
    const calls = users.flatMap((u, i) => [grab(u, voucherId, ipFor(i)), grab(u, voucherId, ipFor(i))]);
    const results = await Promise.all(calls);

    const byStatus = new Map<number, number>();
    for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    expect(byStatus.get(200)).toBe(100);
    expect((byStatus.get(409) ?? 0) + (byStatus.get(410) ?? 0)).toBe(1900);
    const accepted = results.filter((r) => r.status === 200).map((r) => r.json.data);
    for (const a of accepted) expect(a).toEqual({ orderId: expect.stringMatching(/^\d+$/), status: 'pending' });
    expect(new Set(accepted.map((a) => a.orderId)).size).toBe(100);
    const refused = results.find((r) => r.status === 410);
    expect(refused?.json.error.code).toBe('SOLD_OUT');

    await waitDrained(db, redis, voucherId, 100);
    const orders = await db.selectFrom('tb_voucher_order').select(['id', 'user_id']).where('voucher_id', '=', voucherId).execute();
    expect(new Set(orders.map((o) => o.user_id)).size).toBe(100);
    expect(orders.map((o) => o.id).sort()).toEqual(accepted.map((a) => a.orderId).sort());
    const inv = await assertInvariants(voucherId, { drained: true });
    expect(inv).toMatchObject({ redisStock: 0, dbStock: 0, dbOrders: 100, buyers: 100, oversold: 0, duplicates: 0 });
  });

  it('one user × 50 concurrent grabs: one order', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 10 });
    const [u] = await createTestUsers(db, redis, 1);
    const results = await Promise.all(Array.from({ length: 50 }, () => grab(u!, voucherId, ipFor(1))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 409 && r.json.error.code === 'ALREADY_BOUGHT')).toBe(true);
    await waitDrained(db, redis, voucherId, 1);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 9, dbStock: 9, dbOrders: 1 });
  });

  it('before the start and after the end: 403, nothing changes', async () => {
    const early = await createTestVoucher(db, redis, { stock: 5, startsInMs: 3_600_000, endsInMs: 7_200_000 });
    const late = await createTestVoucher(db, redis, { stock: 5, startsInMs: -7_200_000, endsInMs: -1000 });
    const users = await createTestUsers(db, redis, 20);
    const results = await Promise.all(users.flatMap((u, i) => [grab(u, early, ipFor(i)), grab(u, late, ipFor(i))]));
    expect(results.filter((_, i) => i % 2 === 0).every((r) => r.status === 403 && r.json.error.code === 'NOT_STARTED')).toBe(true);
    expect(results.filter((_, i) => i % 2 === 1).every((r) => r.status === 403 && r.json.error.code === 'ENDED')).toBe(true);
    for (const v of [early, late]) {
      expect(await assertInvariants(v, { drained: true })).toMatchObject({ redisStock: 5, buyers: 0, dbStock: 5, dbOrders: 0 });
    }
  });

  it('bad voucher ids, unknown vouchers and bad bodies: 4xx, nothing written', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [u] = await createTestUsers(db, redis, 1);
    const before = await readSeckillState(redis, voucherId);
    const cases: [Parameters<typeof callRoute>[1], number, string][] = [
      [{ params: { voucherId: 'abc' } }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId: '0' } }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId: '-1' } }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId: '1.5' } }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId: '99999999999999999999' } }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId: '9223372036854775807' } }, 404, 'NOT_FOUND'],
      [{ params: { voucherId }, body: { userId: '1' } }, 400, 'VALIDATION'],
      [{ params: { voucherId }, body: [] }, 400, 'VALIDATION'],
      [{ params: { voucherId }, rawBody: '{"broken"' }, 400, 'BAD_REQUEST'],
      [{ params: { voucherId }, rawBody: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ];
    for (const [opts, status, code] of cases) {
      const r = await grab(u!, voucherId, ipFor(2), opts);
      expect([r.status, r.json.error.code]).toEqual([status, code]);
    }
    const anonymous = await callRoute(grabRoute, { method: 'POST', params: { voucherId } });
    expect(anonymous.status).toBe(401);
    const forged = await callRoute(grabRoute, { method: 'POST', params: { voucherId }, token: 'x'.repeat(43) });
    expect(forged.status).toBe(401);

    expect(await readSeckillState(redis, voucherId)).toEqual(before);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ buyers: 0, dbOrders: 0 });
    // An empty JSON object is an acceptable body.
    expect((await grab(u!, voucherId, ipFor(2), { body: {} })).status).toBe(200);
    await waitDrained(db, redis, voucherId, 1);
  });

  it('rate limits per user and per IP answer 429 with Retry-After before anything is decided', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1000, startsInMs: 3_600_000, endsInMs: 7_200_000 });
    const [hasty] = await createTestUsers(db, redis, 1);
    const perUser = await Promise.all(Array.from({ length: 130 }, () => grab(hasty!, voucherId, ipFor(3))));
    expect(perUser.filter((r) => r.status === 403)).toHaveLength(100);
    const limited = perUser.filter((r) => r.status === 429);
    expect(limited).toHaveLength(30);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    ipBlock = (ipBlock + 1) % 250;
    const crowd = await createTestUsers(db, redis, 230);
    const sameIp = await Promise.all(crowd.map((u) => grab(u, voucherId, '10.250.250.250')));
    expect(sameIp.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(30);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ buyers: 0, redisStock: 1000 });
  });
});
