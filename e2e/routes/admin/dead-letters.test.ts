/**
 * Dead letters end to end: a real order the worker cannot persist (MySQL stock drifted to 0)
 * exhausts its retries into tb_order_dead_letter; the live page calls that inconsistent; after the
 * fix a replay persists it exactly once (replays are idempotent, concurrent ones act once), and a
 * discard gives the unit back (to the first on the waitlist, if anyone waits). Every decision is audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { GET as liveRoute } from '@/app/api/admin/vouchers/[id]/stock/route';
import { GET as listRoute } from '@/app/api/admin/dead-letters/route';
import { POST as replayRoute } from '@/app/api/admin/dead-letters/[id]/replay/route';
import { POST as discardRoute } from '@/app/api/admin/dead-letters/[id]/discard/route';
import { POST as replayAllRoute } from '@/app/api/admin/dead-letters/replay-all/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { POST as joinWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { keys } from '@/lib/redis/keys';
import { readSeckillState } from '@/lib/seckill/state';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { createTestUsers, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { listAudit } from '@/lib/audit/audit';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { insertDeadLetter } from '@/e2e/support/fixtures/admin.repository';

let f: ConsoleFixture;
let users: TestUser[];
const suite = orderWorkerSuite({ options: { batchWaitMs: 5, sweepIntervalMs: 300, staleMs: 500, retryBaseMs: 100, maxAttempts: 2 } });
const ipBase = Math.floor(Math.random() * 200);

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  users = await createTestUsers(db, redis, 6);
  await suite.start();
});
afterAll(suite.end);

const as = (token: string) => ({ token, method: 'POST' as const });
const live = async (id: string) => (await callRoute(liveRoute, { token: f.merchantA.token, params: { id } })).json.data;
const setDbStock = (id: string, stock: number) => sql`UPDATE tb_seckill_voucher SET stock = ${stock} WHERE voucher_id = ${id}`.execute(db);
const orderCount = async (id: string) =>
  Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_voucher_order WHERE voucher_id = ${id}`.execute(db)).rows[0]!.n);

/** A sale of `stock` (3) whose MySQL stock drifted to 0, and a grab the worker will dead-letter. */
async function deadLetteredGrab(user: TestUser, i: number, stock = 3): Promise<{ voucherId: string; deadId: string }> {
  const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock }) });
  const voucherId = r.json.data.id as string;
  await setDbStock(voucherId, 0);
  const g = await callRoute(grabRoute, { method: 'POST', token: user.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.${ipBase}.5.${i}` } });
  expect(g.status).toBe(200);
  const dead = await waitFor('dead letter', async () => {
    const l = await callRoute(listRoute, { token: f.merchantA.token, query: { voucherId } });
    return l.json.data.items[0];
  });
  expect(dead).toMatchObject({ orderId: g.json.data.orderId, voucherId, userId: user.userId, status: 'dead', attempts: 2 });
  expect(dead.reason).toContain('stock guard');
  return { voucherId, deadId: dead.id };
}

describe('dead letters', () => {
  it('inconsistent while dead; after the fix, concurrent replays act once and the order lands once', async () => {
    const { voucherId, deadId } = await deadLetteredGrab(users[0]!, 0);
    const s = await live(voucherId);
    expect(s.numbers.deadLetters).toBe(1);
    expect(s.consistency.status).toBe('inconsistent');
    expect(s.consistency.differences.map((d: { rule: string }) => d.rule)).toContain('dead-letters');

    await setDbStock(voucherId, 3); // the operator repairs the drift
    const replays = await Promise.all(Array.from({ length: 5 }, () => callRoute(replayRoute, { ...as(f.merchantA.token), params: { id: deadId } })));
    expect(replays.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(replays.filter((r) => r.json.data.changed)).toHaveLength(1);

    await waitFor('replayed order persisted', async () => (await live(voucherId)).consistency.status === 'consistent');
    expect(await orderCount(voucherId)).toBe(1);
    await assertInvariants(voucherId, { drained: true });

    const again = await callRoute(replayRoute, { ...as(f.merchantA.token), params: { id: deadId } });
    expect(again.json.data).toEqual({ id: deadId, status: 'replayed', changed: false });
    expect(await orderCount(voucherId)).toBe(1);
    const audits = await listAudit(db, { targetType: 'dead-letter', targetId: deadId, limit: 5 });
    expect(audits.map((a) => a.action)).toEqual(['dead-letter.replay']);
  });

  it('discard: the unit goes back on sale, the verdict returns to consistent', async () => {
    const { voucherId, deadId } = await deadLetteredGrab(users[1]!, 1);
    await setDbStock(voucherId, 3);
    const r = await callRoute(discardRoute, { ...as(f.merchantA.token), params: { id: deadId } });
    expect(r.json.data).toEqual({ id: deadId, status: 'discarded', changed: true });
    expect((await callRoute(replayRoute, { ...as(f.merchantA.token), params: { id: deadId } })).json.data.changed).toBe(false);
    const done = await waitFor('unit released', async () => {
      const s = await live(voucherId);
      return s.consistency.status === 'consistent' ? s : null;
    });
    expect(done.numbers).toMatchObject({ redisRemaining: 3, buyers: 0, pending: 0, dbOrders: 0 });
  });

  it('discard while people wait on the waitlist: the unit is the first waiter\'s offer, not put on open sale', async () => {
    const { voucherId, deadId } = await deadLetteredGrab(users[4]!, 4, 1);
    await setDbStock(voucherId, 1);
    // The one unit is the dead letter's: sold out, so users[5] joins the waitlist.
    const joined = await callRoute(joinWaitlistRoute, { ...as(users[5]!.token), params: { voucherId } });
    expect(joined.json.data.me).toEqual({ state: 'waiting', position: 1 });
    expect((await callRoute(discardRoute, { ...as(f.merchantA.token), params: { id: deadId } })).json.data.changed).toBe(true);
    await waitFor('the unit offered', async () => ((await redis.zscore(keys.seckillOffers(voucherId), users[5]!.userId)) !== null ? true : null));
    expect(await readSeckillState(redis, voucherId)).toMatchObject({ remaining: 0, buyers: 0, pending: 0, offers: 1 });
    await assertInvariants(voucherId, { drained: true });
  });

  it('replay-all replays what the caller may see; an unparseable letter is admin-only and can only be discarded', async () => {
    const a = await deadLetteredGrab(users[2]!, 2);
    await setDbStock(a.voucherId, 3);
    const poison = await insertDeadLetter(db, { orderId: null, voucherId: null, userId: null, payload: `not json ${Date.now()}`, reason: 'unparseable: body is not JSON', attempts: 1 });
    expect((await callRoute(replayRoute, { ...as(f.merchantA.token), params: { id: poison } })).status).toBe(403);
    expect((await callRoute(replayRoute, { ...as(f.admin.token), params: { id: poison } })).status).toBe(409);

    const all = await callRoute(replayAllRoute, as(f.merchantA.token));
    expect(all.status).toBe(200);
    expect(all.json.data.replayed).toBeGreaterThanOrEqual(1);
    await waitFor('replayed', async () => (await orderCount(a.voucherId)) === 1);

    expect((await callRoute(discardRoute, { ...as(f.admin.token), params: { id: poison } })).json.data.changed).toBe(true);
  });
});
