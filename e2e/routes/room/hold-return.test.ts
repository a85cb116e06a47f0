/**
 * A unit that comes back to a sold-out room sale (docs/fair-sale.md#an-admitted-ticket-holds-a-unit):
 * the next ticket waiting in the room is admitted at once when the unit reaches the open stock,
 * and nobody is admitted while it is a waitlist offer. The hold cap counted the units the room's
 * admitted had won as the size of the buyers set: a buyer who cancelled left it, so their ticket
 * counted as admitted-and-not-bought, holding the very unit they had given back (they forfeited:
 * they cannot buy it), and the next ticket waited for the cancelled buyer's hold to run out, up
 * to 1¼ holds after the sell-out, with a unit on sale and nobody allowed to take it. And a
 * ticket holder who bought through the waitlist before their place came held a unit in the cap's
 * count once the counter reached their place: the ticket after them waited a hold. Real
 * Redis/Lua, MySQL, RabbitMQ and worker, through the routes.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';

const HOLD_MS = 8000;
const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '20', ROOM_HOLD_MS: '8000', WAITLIST_OFFER_MS: '1500' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { POST as joinWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { POST as claimRoute } from '@/app/api/seckill/[voucherId]/waitlist/claim/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { expireOffers } from '@/lib/seckill/waitlist/offer-expiry';
import { assertInvariants } from '@/lib/seckill/invariants';
import { createTestUsers, waitDrained, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { callJoin as join, callLook as look, buyThroughRoom, createRoomVoucher, solveGate as solve } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

const cancel = (u: TestUser, orderId: string) => callRoute(cancelRoute, { method: 'POST', token: u.token, params: { id: orderId } });
const joinWaitlist = async (u: TestUser, voucherId: string) =>
  callRoute(joinWaitlistRoute, { method: 'POST', token: u.token, params: { voucherId }, body: { altcha: await solve(u, voucherId) } });
const stateOf = async (u: TestUser, voucherId: string) => (await look(u, voucherId)).json.data;

const buy = (u: TestUser, voucherId: string, ticket: string) => buyThroughRoom(u, voucherId, ticket, 5000);

/**
 * Stock 2, five tickets: the first two admitted (the cap, not the rate, stops the third) and both
 * buy: sold out, three waiting. Returns when the orders are in MySQL (a cancel needs them there).
 */
async function soldOutWithThreeWaiting() {
  const voucherId = await createRoomVoucher(db, redis, { stock: 2 });
  const users = await createTestUsers(db, redis, 5);
  const admittedBefore = Date.now();
  const tickets: string[] = [];
  for (const u of users) tickets.push((await join(u, voucherId)).json.data.ticket);
  const orders = [await buy(users[0]!, voucherId, tickets[0]!), await buy(users[1]!, voucherId, tickets[1]!)];
  await waitDrained(db, redis, voucherId, 2);
  expect(await stateOf(users[2]!, voucherId)).toMatchObject({ state: 'soldout' });
  return { voucherId, users, tickets, orders, admittedBefore };
}

it('a unit cancelled back to the open stock admits the next waiting ticket at once, and only it', async () => {
  const { voucherId, users, tickets, orders, admittedBefore } = await soldOutWithThreeWaiting();
  const [a, , c, d, e] = users;
  // Nobody is on the waitlist: a's unit goes to the open stock.
  expect((await cancel(a!, orders[0]!)).status).toBe(200);
  expect(await redis.get(keys.seckillStock(voucherId))).toBe('1');
  // (Only meaningful while the two buyers' holds still run: a box this slow fails here loudly.)
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS / 2);
  // c, next in line, is admitted within a second (the rate admits one a twentieth of a second).
  // Before the fix: waiting, allHeld (名额已全部保留给排在你前面的人) for the cancelled buyer's whole hold.
  await waitFor('c admitted', async () => (await stateOf(c!, voucherId)).state === 'admitted', 1000, 50);
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS);
  // One unit, one holder within its hold: d and e wait behind it, told so.
  await new Promise((r) => setTimeout(r, 300));
  expect(await stateOf(d!, voucherId)).toMatchObject({ state: 'waiting', ahead: 0, allHeld: true });
  expect(await stateOf(e!, voucherId)).toMatchObject({ state: 'waiting', ahead: 1, allHeld: true });
  // c buys the unit it holds.
  await buy(c!, voucherId, tickets[2]!);
  await waitDrained(db, redis, voucherId, 2);
  await assertInvariants(voucherId, { drained: true });
});

it('a unit cancelled to a waitlist offer admits nobody in the room; claimed, the next unit back to the stock admits the next ticket that has not bought, at once', async () => {
  const { voucherId, users, tickets, orders, admittedBefore } = await soldOutWithThreeWaiting();
  const [a, b, c, d, e] = users;
  // c passed the gate while waiting and joins the waitlist; a cancels: the unit is c's offer.
  expect((await joinWaitlist(c!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 1 });
  expect((await cancel(a!, orders[0]!)).status).toBe(200);
  expect(await redis.zrange(keys.seckillOffers(voucherId), 0, -1)).toEqual([c!.userId]);
  // Not on open sale: the room stays sold out, the counter admits nobody.
  await new Promise((r) => setTimeout(r, 300));
  for (const u of [c!, d!, e!]) expect(await stateOf(u, voucherId)).toMatchObject({ state: 'soldout', served: 2 });
  // c claims; then b cancels, nobody waits on the list: that unit goes to the open stock.
  const claimed = await callRoute(claimRoute, { method: 'POST', token: c!.token, params: { voucherId } });
  expect(claimed.status).toBe(200);
  await waitDrained(db, redis, voucherId, 2);
  expect((await cancel(b!, orders[1]!)).status).toBe(200);
  expect(await redis.get(keys.seckillStock(voucherId))).toBe('1');
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS / 2);
  // The counter moves on at once: past c, whose place bought through the waitlist and holds
  // nothing (before: counted as holding it for a hold, d waiting all that time), to d, who holds the unit.
  await waitFor('d admitted', async () => (await stateOf(d!, voucherId)).state === 'admitted', 1000, 50);
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS);
  expect(await stateOf(c!, voucherId)).toMatchObject({ state: 'admitted' });
  // One unit, one holder: e waits behind d.
  await new Promise((r) => setTimeout(r, 300));
  expect(await stateOf(e!, voucherId)).toMatchObject({ state: 'waiting', ahead: 0, allHeld: true });
  await buy(d!, voucherId, tickets[3]!);
  await waitDrained(db, redis, voucherId, 2);
  await assertInvariants(voucherId, { drained: true });
});

it('an offer that expires with nobody left on the waitlist puts its unit in the stock, and the next waiting ticket is admitted at once', async () => {
  const { voucherId, users, tickets, orders, admittedBefore } = await soldOutWithThreeWaiting();
  const [a, , c, d] = users;
  expect((await joinWaitlist(c!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 1 });
  expect((await cancel(a!, orders[0]!)).status).toBe(200);
  expect(await redis.zrange(keys.seckillOffers(voucherId), 0, -1)).toEqual([c!.userId]);
  // c lets the offer (WAITLIST_OFFER_MS, 1.5 s here) run out; the expiry pass finds nobody else waiting.
  await new Promise((r) => setTimeout(r, 1600));
  expect(await expireOffers(redis, voucherId)).toEqual({ expired: 1, offered: 0, toStock: 1 });
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS / 2);
  // c, next in line in the room, is admitted to the unit at once; before the fix, a's ticket held it.
  await waitFor('c admitted', async () => (await stateOf(c!, voucherId)).state === 'admitted', 1000, 50);
  expect(Date.now() - admittedBefore).toBeLessThan(HOLD_MS);
  expect(await stateOf(d!, voucherId)).toMatchObject({ state: 'waiting', ahead: 0, allHeld: true });
  await buy(c!, voucherId, tickets[2]!);
  await waitDrained(db, redis, voucherId, 2);
  await assertInvariants(voucherId, { drained: true });
});
