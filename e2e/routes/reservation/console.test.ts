/**
 * A merchant makes a flash sale reservation-only in the console (POST /api/admin/vouchers with
 * `reservation`), and the console's view shows reservations per minute and, after the start, the
 * draw: seed revealed, matching its committed hash, re-run to the recorded winners.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { PATCH as editRoute } from '@/app/api/admin/vouchers/[id]/route';
import { POST as reserveRoute } from '@/app/api/seckill/[voucherId]/reservation/route';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { keys } from '@/lib/redis/keys';
import { reservationConsoleView } from '@/lib/seckill/reservation/console';
import { startSaleNow } from '@/e2e/support/fixtures/reservation';
import { ensureDrawn } from '@/lib/seckill/reservation/reservation';
import { seedHash } from '@/lib/seckill/reservation/draw';

let f: ConsoleFixture;
beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});
afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const iso = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();
const H = 3600_000;

describe('a reservation-only sale in the console', () => {
  it('created with a draw: gated in Redis, the seed hash committed; per-minute counts; after the start the draw shows and verifies', async () => {
    const body = { ...seckillBody(f.shopA, { stock: 2 }), beginTime: iso(H), endTime: iso(2 * H), reservation: { mode: 'draw', reserveBegin: iso(-60_000) } };
    const r = await callRoute(createRoute, { token: f.merchantA.token, body });
    expect(r.status).toBe(201);
    const id = r.json.data.id as string;
    expect(await redis.hget(keys.seckillMeta(id), 'gate')).toBe('d');

    const users = await createTestUsers(db, redis, 5);
    for (const u of users) expect((await callRoute(reserveRoute, { method: 'POST', token: u.token, params: { voucherId: id } })).status).toBe(200);
    const before = (await reservationConsoleView(db, id))!;
    expect(before).toMatchObject({ mode: 'draw', reserved: 5, draw: { seed: null, drawnAt: null, winnerList: [], verified: null } });
    expect(before.perMinute.reduce((s, m) => s + m.n, 0)).toBe(5);
    expect(before.perMinute[0]!.minute).toMatch(/:00\.000Z$/);

    await startSaleNow(db, redis, id);
    expect(await ensureDrawn(db, redis, id)).toBe(true);
    const after = (await reservationConsoleView(db, id))!;
    expect(after.draw).toMatchObject({ seedHash: before.draw!.seedHash, reserved: 5, winners: 2, verified: true });
    expect(seedHash(after.draw!.seed!)).toBe(before.draw!.seedHash);
    expect(after.draw!.winnerList).toHaveLength(2);
  });

  it('refuses a reservation window that does not open before the start, and a reservation on a normal voucher', async () => {
    const begin = iso(H);
    const late = await callRoute(createRoute, { token: f.merchantA.token, body: { ...seckillBody(f.shopA), beginTime: begin, endTime: iso(2 * H), reservation: { mode: 'first-come', reserveBegin: begin } } });
    expect(late.status).toBe(400);
    expect(late.json.error.fields['reservation.reserveBegin']).toMatch(/早于秒杀开始时间/);
    const bad = await callRoute(createRoute, { token: f.merchantA.token, body: { ...seckillBody(f.shopA), reservation: { mode: 'lottery', reserveBegin: iso(0) } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.fields['reservation.mode']).toMatch(/first-come/);
  });

  it('an edit may not move the start to or before the opening of reservations (nobody could ever reserve)', async () => {
    const reserveBegin = iso(H);
    const body = { ...seckillBody(f.shopA), beginTime: iso(2 * H), endTime: iso(3 * H), reservation: { mode: 'draw', reserveBegin } };
    const r = await callRoute(createRoute, { token: f.merchantA.token, body });
    expect(r.status).toBe(201);
    const id = r.json.data.id as string;
    const beginBefore = await db.selectFrom('tb_seckill_voucher').select('begin_time').where('voucher_id', '=', id).executeTakeFirstOrThrow();
    for (const beginTime of [iso(H / 2), reserveBegin]) {
      const e = await callRoute(editRoute, { method: 'PATCH', token: f.merchantA.token, params: { id }, body: { beginTime } });
      expect(e.status).toBe(400);
      expect(e.json.error.fields.beginTime).toMatch(/晚于预约开始时间/);
    }
    const beginAfter = await db.selectFrom('tb_seckill_voucher').select('begin_time').where('voucher_id', '=', id).executeTakeFirstOrThrow();
    expect(beginAfter.begin_time.getTime()).toBe(beginBefore.begin_time.getTime());
    // A start still after the opening of reservations is an ordinary edit.
    const ok = await callRoute(editRoute, { method: 'PATCH', token: f.merchantA.token, params: { id }, body: { beginTime: iso(1.5 * H) } });
    expect(ok.status).toBe(200);
  });

  it('an ordinary sale has no reservation view and no gate field', async () => {
    const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA) });
    expect(r.status).toBe(201);
    expect(await reservationConsoleView(db, r.json.data.id)).toBeNull();
    expect(await redis.hget(keys.seckillMeta(r.json.data.id), 'gate')).toBeNull();
  });
});
