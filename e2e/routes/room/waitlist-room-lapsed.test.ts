/**
 * A room sale's waitlist is served in room-place order (docs/fair-sale.md#a-room-sales-waitlist);
 * an offer is the waitlist's hold, and a holder who let it lapse must not take their place back.
 * Through the real routes, worker, MySQL, Redis/Lua and RabbitMQ: two ticket holders with the
 * earliest places who never claim, each joining again as soon as their offer expired, would
 * otherwise be offered every returned unit in turn, for the sale's whole life, and a ticket holder
 * behind them none.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '20', WAITLIST_OFFER_MS: '1000' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { GET as viewRoute, POST as joinWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { expireOffers } from '@/lib/seckill/waitlist/offer-expiry';
import { createTestUsers, waitDrained, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { buyThroughRoom, callJoin, createRoomVoucher, solveGate } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';
import { redisNowMs } from '@/lib/seckill/outbox';
import { waitKeys } from '@/lib/seckill/waitlist/tag';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

const joinWaitlist = (u: TestUser, voucherId: string) => callRoute(joinWaitlistRoute, { method: 'POST', token: u.token, params: { voucherId } });
const positionOf = async (u: TestUser, voucherId: string) => (await callRoute(viewRoute, { method: 'GET', token: u.token, params: { voucherId } })).json.data.me;
const offered = (voucherId: string) => redis.zrange(keys.seckillOffers(voucherId), 0, -1);
/** The expiry pass (the worker's timer runs it every second in production), once the open offer is due. */
const expireDue = (voucherId: string) => waitFor('the open offer expired and moved on', async () => ((await expireOffers(redis, voucherId)).expired > 0 ? true : null), 10_000, 100);

/** Until the user's open offer is past its expiry by Redis' clock (no pass runs by itself in these tests). */
async function waitPastExpiry(u: TestUser, voucherId: string): Promise<void> {
  const expiresAt = Number(await redis.zscore(keys.seckillOffers(voucherId), u.userId));
  await waitFor('the offer is past its expiry', async () => ((await redisNowMs(redis)) >= expiresAt ? true : null), 10_000, 50);
}

/** Buyers take the sale's whole stock through the room; `waiters` pass the gate there and join the waitlist, in that order. Returns the buyers' order ids. */
async function soldOutWith(voucherId: string, buyers: TestUser[], waiters: TestUser[]): Promise<string[]> {
  const tickets: string[] = [];
  for (const b of buyers) tickets.push((await callJoin(b, voucherId)).json.data.ticket);
  for (const w of waiters) expect((await callJoin(w, voucherId, { altcha: await solveGate(w, voucherId) })).status).toBe(200);
  const orders: string[] = [];
  for (const [i, b] of buyers.entries()) orders.push(await buyThroughRoom(b, voucherId, tickets[i]!));
  await waitDrained(db, redis, voucherId, buyers.length);
  for (const w of waiters) expect((await joinWaitlist(w, voucherId)).status).toBe(200);
  return orders;
}
const cancel = (u: TestUser, orderId: string) => callRoute(cancelRoute, { method: 'POST', token: u.token, params: { id: orderId } });

/** A sold-out room sale of one unit whose buyer cancelled: the unit is offered to g1, the only one waiting. */
async function offeredToLoneWaiter(): Promise<{ voucherId: string; g1: TestUser }> {
  const voucherId = await createRoomVoucher(db, redis, { stock: 1 });
  const [a, g1] = await createTestUsers(db, redis, 2);
  const [orderId] = await soldOutWith(voucherId, [a!], [g1!]);
  expect((await cancel(a!, orderId!)).status).toBe(200);
  expect(await offered(voucherId)).toEqual([g1!.userId]);
  return { voucherId, g1: g1! };
}

describe("a room sale's waitlist after an offer lapsed", () => {
  it('an offer that expired costs its holder the room place: joining again queues behind the ticket holders still waiting, so two early places cannot pass a unit between them', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 1 });
    const [a, g1, g2, h] = await createTestUsers(db, redis, 4);

    // a takes place 1 and buys the one unit; g1, g2 and h take places 2..4 and pass the gate in the room.
    const ja = await callJoin(a!, voucherId);
    expect(ja.json.data.position).toBe(1);
    for (const [i, p] of [g1!, g2!, h!].entries()) {
      const j = await callJoin(p, voucherId, { altcha: await solveGate(p, voucherId) });
      expect(j.status).toBe(200);
      expect(j.json.data.position).toBe(i + 2);
    }
    const orderId = await buyThroughRoom(a!, voucherId, ja.json.data.ticket);
    await waitDrained(db, redis, voucherId, 1);

    for (const [i, p] of [g1!, g2!, h!].entries()) expect((await joinWaitlist(p, voucherId)).json.data.me).toEqual({ state: 'waiting', position: i + 1 });

    // a cancels: g1 (the earliest place) is offered the unit and lets it run out; it moves on to g2.
    expect((await callRoute(cancelRoute, { method: 'POST', token: a!.token, params: { id: orderId } })).status).toBe(200);
    expect(await offered(voucherId)).toEqual([g1!.userId]);
    await expireDue(voucherId);
    expect(await offered(voucherId)).toEqual([g2!.userId]);

    // g1 joins again at once: behind h, who still waits, not back at the head with place 2.
    expect((await joinWaitlist(g1!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 2 });
    expect(await positionOf(h!, voucherId)).toEqual({ state: 'waiting', position: 1 });

    // g2 lets it run out too: the unit reaches h. (Were g1 back at the head, g1 and g2 would take it
    // in turn, joining again after each lapse, and h would never see it.)
    await expireDue(voucherId);
    expect(await offered(voucherId)).toEqual([h!.userId]);
    expect((await joinWaitlist(g2!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 2 });
    await assertInvariants(voucherId);
  });

  it("joining in the moment after one's own offer expired, before the pass closed it, closes that offer first: the unit goes to the next in line and the user queues behind everyone at once (not a silent no-op)", async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 1 });
    const [a, g1, g2, h] = await createTestUsers(db, redis, 4);
    const [orderId] = await soldOutWith(voucherId, [a!], [g1!, g2!, h!]);

    expect((await cancel(a!, orderId!)).status).toBe(200);
    expect(await offered(voucherId)).toEqual([g1!.userId]);
    // g1's offer runs out by Redis' clock; no pass has run (the tests run none by themselves).
    await waitPastExpiry(g1!, voucherId);
    expect(await offered(voucherId)).toEqual([g1!.userId]); // still open in Redis: the pass closes it

    // g1 joins again now: the join closes the lapsed offer (its unit to g2, the head), and g1 queues
    // behind h, their room place spent, exactly as after the pass.
    const again = await joinWaitlist(g1!, voucherId);
    expect(again.status).toBe(200);
    expect(again.json.data.me).toEqual({ state: 'waiting', position: 2 });
    expect(await offered(voucherId)).toEqual([g2!.userId]);
    expect(await positionOf(h!, voucherId)).toEqual({ state: 'waiting', position: 1 });
    expect(await redis.hget(waitKeys(voucherId).stats, 'expired')).toBe('1'); // closed once, by the join
    await assertInvariants(voucherId);
  });

  it('who joins in that moment alone on the list is not offered the same unit again: it goes on open sale, and the join says so', async () => {
    const { voucherId, g1 } = await offeredToLoneWaiter();
    await waitPastExpiry(g1!, voucherId);

    // Were the unit offered to g1 again, a script joining again in each gap (≤ 1 s) would keep it off sale for good.
    const again = await joinWaitlist(g1!, voucherId);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('NOT_SOLD_OUT');
    expect(await offered(voucherId)).toEqual([]);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('1');
    expect(await positionOf(g1!, voucherId)).toEqual({ state: 'none' });
    await assertInvariants(voucherId);
  });

  it('lapsed holders joining at once close each offer once, queue behind everyone in the order they joined, and the next return goes to the first of them', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 3 });
    const [a, b, c, g1, g2, g3, h] = await createTestUsers(db, redis, 7);
    const [oa, ob, oc] = await soldOutWith(voucherId, [a!, b!, c!], [g1!, g2!, g3!, h!]);
    // Two units come back: g1 and g2 (the earliest places) are offered one each and let them run out.
    expect((await cancel(a!, oa!)).status).toBe(200);
    expect((await cancel(b!, ob!)).status).toBe(200);
    expect(await offered(voucherId)).toEqual([g1!.userId, g2!.userId]);
    await waitPastExpiry(g2!, voucherId);

    // Both join again at once: whichever join runs the pass first closes both offers, the units going
    // to g3 and h; each join then queues its user behind them. Never a unit moved twice.
    const joins = await Promise.all([g1!, g2!].map((u) => joinWaitlist(u, voucherId)));
    expect(joins.map((j) => j.status)).toEqual([200, 200]);
    expect((await offered(voucherId)).sort()).toEqual([g3!.userId, h!.userId].sort());
    expect(await redis.hget(waitKeys(voucherId).stats, 'expired')).toBe('2');
    const places = joins.map((j) => j.json.data.me.position as number).sort();
    expect(places).toEqual([1, 2]);
    await assertInvariants(voucherId);

    // The third unit goes to whichever of them joined first; the other is then next.
    const first = joins[0]!.json.data.me.position === 1 ? g1! : g2!;
    const second = first === g1 ? g2! : g1!;
    expect((await cancel(c!, oc!)).status).toBe(200);
    expect((await offered(voucherId)).sort()).toEqual([g3!.userId, h!.userId, first.userId].sort());
    expect(await positionOf(second, voucherId)).toEqual({ state: 'waiting', position: 1 });
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('0');
    await assertInvariants(voucherId);
  });

  it("the pass never offers a unit back to the holder of the offer it closes, were an entry of theirs on the list (it cannot get there through the join: this pins the guard)", async () => {
    const { voucherId, g1 } = await offeredToLoneWaiter();
    // An entry beside the open offer, written straight to Redis (the join refuses a holder: 15 or 19).
    await redis.zadd(waitKeys(voucherId).waitlist, 1e12 + 1, g1!.userId);
    // The invariants see the forged state (one user waiting with an open offer).
    await expect(assertInvariants(voucherId)).rejects.toThrow('1 users are on the waitlist and hold an open offer');
    await waitPastExpiry(g1!, voucherId);
    expect(await expireOffers(redis, voucherId)).toEqual({ expired: 1, offered: 0, toStock: 1 });
    expect(await offered(voucherId)).toEqual([]);
    expect(await positionOf(g1!, voucherId)).toEqual({ state: 'waiting', position: 1 });
    await assertInvariants(voucherId);
  });
});
