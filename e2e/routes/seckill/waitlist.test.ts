/**
 * The waitlist for returned units (docs/fair-sale.md#waitlist) through its routes and the real
 * cancel route, against the real worker, MySQL, Redis/Lua and RabbitMQ: who may join, many
 * returns at once (each unit offered once, to distinct waiters in joining order, never oversold),
 * claims (an order like a grab's), expiry passes run by several callers at once, and claims racing
 * the expiry pass. After every step stock + buyers + open offers = initial.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.WAITLIST_OFFER_MS = '2000';
  process.env.WAITLIST_MAX = '40';
});

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { DELETE as leaveRoute, GET as viewRoute, POST as joinRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { POST as claimRoute } from '@/app/api/seckill/[voucherId]/waitlist/claim/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { keys } from '@/lib/redis/keys';
import { expireOffers } from '@/lib/seckill/waitlist/offer-expiry';
import { waitlistNumbers } from '@/lib/seckill/waitlist/numbers';
import { createTestUsers, testShopId, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop, grabAll, waitPersisted } from '@/e2e/support/fixtures/order-lifecycle';
import { backdateOrder, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { cancelIfOverdue } from '@/lib/order/lifecycle';
import { startOfferExpiry } from '@/lib/seckill/waitlist/offer-expiry';
import { grabVoucher } from '@/lib/seckill/grab';
import { readLiveStock } from '@/lib/admin/live-stock';
import { register } from 'prom-client';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { markCancelled, returnStockRow } from '@/lib/order/lifecycle.repository';
import { completeOwedReturns } from '@/lib/order/stock-return';
import { env } from '@/lib/env';

const suite = orderWorkerSuite({ options: { batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1000 }, waitOutKeys: true });
let shopId: string;

beforeAll(async () => {
  await suite.start();
  shopId = await testShopId(db);
});

afterAll(suite.end);

const join = (u: TestUser, voucherId: string) => callRoute(joinRoute, { method: 'POST', token: u.token, params: { voucherId } });
const leave = (u: TestUser, voucherId: string) => callRoute(leaveRoute, { method: 'DELETE', token: u.token, params: { voucherId } });
const view = (u: TestUser, voucherId: string) => callRoute(viewRoute, { method: 'GET', token: u.token, params: { voucherId } });
const claim = (u: TestUser, voucherId: string) => callRoute(claimRoute, { method: 'POST', token: u.token, params: { voucherId } });
const cancel = (u: TestUser, id: string) => callRoute(cancelRoute, { method: 'POST', token: u.token, params: { id } });
const offered = (voucherId: string) => redis.zrange(keys.seckillOffers(voucherId), 0, -1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sold-out sale: `stock` persisted buyers, and `waiters` users who joined its waitlist one after another. */
async function soldOutSaleWithWaitlist(stock: number, waiters: number) {
  const voucherId = await createSaleInShop(db, redis, shopId, stock);
  const buyers = await createTestUsers(db, redis, stock);
  const orderIds = await grabAll(db, redis, voucherId, buyers.map((u) => u.userId));
  await waitPersisted(db, redis, voucherId, stock);
  const orderOf = new Map<string, string>();
  for (const id of orderIds) orderOf.set((await orderRow(db, id)).user_id, id);
  const waiting = await createTestUsers(db, redis, waiters);
  for (const [i, u] of waiting.entries()) {
    const r = await join(u, voucherId);
    expect(r.status).toBe(200);
    expect(r.json.data.me).toEqual({ state: 'waiting', position: i + 1 });
  }
  return { voucherId, buyers, waiting, orderOf: (u: TestUser) => orderOf.get(u.userId)! };
}

describe('joining', () => {
  it('only a sold-out sale, once per user (ten joins at once hold one place), not a buyer, capped, and leaving works', async () => {
    const voucherId = await createSaleInShop(db, redis, shopId, 2);
    const [a, b, c] = await createTestUsers(db, redis, 3);
    const early = await join(a!, voucherId);
    expect(early.status).toBe(409);
    expect(early.json.error.code).toBe('NOT_SOLD_OUT');

    await grabAll(db, redis, voucherId, [a!.userId, b!.userId]);
    const bought = await join(a!, voucherId);
    expect(bought.status).toBe(409);
    expect(bought.json.error.code).toBe('ALREADY_BOUGHT');

    const many = await Promise.all(Array.from({ length: 10 }, () => join(c!, voucherId)));
    expect(many.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await redis.zcard(keys.seckillWaitlist(voucherId))).toBe(1);
    expect((await view(c!, voucherId)).json.data).toMatchObject({ waiting: 1, me: { state: 'waiting', position: 1 } });

    // WAITLIST_MAX = 40: the 41st distinct user is refused.
    const more = await createTestUsers(db, redis, 40);
    const answers = await Promise.all(more.map((u) => join(u, voucherId)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(39);
    expect(answers.filter((r) => r.status === 409 && r.json.error.code === 'WAITLIST_FULL')).toHaveLength(1);
    expect(await redis.zcard(keys.seckillWaitlist(voucherId))).toBe(40);

    expect((await leave(c!, voucherId)).json.data.me).toEqual({ state: 'none' });
    expect(await redis.zcard(keys.seckillWaitlist(voucherId))).toBe(39);
    const stranger = await callRoute(joinRoute, { method: 'POST', params: { voucherId } });
    expect(stranger.status).toBe(401);
    const bad = await callRoute(joinRoute, { method: 'POST', token: c!.token, params: { voucherId: 'abc' } });
    expect(bad.status).toBe(400);
  });
});

describe('returns, offers and claims', () => {
  it('30 cancels at once: the first 20 waiters get one offer each, the rest go back to stock, never oversold', async () => {
    const s = await soldOutSaleWithWaitlist(30, 20);
    const answers = await Promise.all(s.buyers.map((u) => cancel(u, s.orderOf(u))));
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill(200));
    const offers = await offered(s.voucherId);
    expect(offers.sort()).toEqual(s.waiting.map((u) => u.userId).sort());
    const state = (await readSeckillState(redis, s.voucherId))!;
    expect(state).toMatchObject({ remaining: 10, buyers: 0, offers: 20 });
    await assertInvariants(s.voucherId);
    const numbers = await waitlistNumbers(redis, s.voucherId);
    expect(numbers).toMatchObject({ waiting: 0, offersOpen: 20, offered: 20, claimed: 0, expired: 0 });
    // A buyer who gave a unit back may not wait for it again.
    const forfeiter = await join(s.buyers[0]!, s.voucherId);
    expect(forfeiter.json.error.code).toBe('FORFEITED');
  });

  it('returns one at a time go to the waiters in joining order; each claims once (two claims at once), orders persist', async () => {
    const s = await soldOutSaleWithWaitlist(6, 8);
    for (const [i, u] of s.buyers.entries()) {
      expect((await cancel(u, s.orderOf(u))).status).toBe(200);
      expect(await offered(s.voucherId)).toContain(s.waiting[i]!.userId);
      expect(await offered(s.voucherId)).toHaveLength(i + 1);
    }
    expect((await readSeckillState(redis, s.voucherId))!.remaining).toBe(0);
    const v = await view(s.waiting[0]!, s.voucherId);
    expect(v.json.data.me.state).toBe('offered');
    expect(v.json.data.me.expiresInMs).toBeGreaterThan(0);
    expect((await view(s.waiting[6]!, s.voucherId)).json.data.me).toEqual({ state: 'waiting', position: 1 });

    const winners = s.waiting.slice(0, 6);
    const claims = await Promise.all(winners.flatMap((u) => [claim(u, s.voucherId), claim(u, s.voucherId)]));
    expect(claims.filter((r) => r.status === 200)).toHaveLength(6);
    expect(claims.filter((r) => r.status === 409)).toHaveLength(6); // the second of each pair: NO_OFFER or ALREADY_BOUGHT
    expect((await claim(s.waiting[6]!, s.voucherId)).json.error.code).toBe('NO_OFFER');
    await waitPersisted(db, redis, s.voucherId, 12);
    const created = claims.filter((r) => r.status === 200).map((r) => r.json.data.orderId as string);
    for (const id of created) expect((await orderRow(db, id)).status).toBe(1);
    await assertInvariants(s.voucherId, { drained: true });
    expect(await waitlistNumbers(redis, s.voucherId)).toMatchObject({ waiting: 2, offersOpen: 0, offered: 6, claimed: 6, expired: 0 });
  });

  it('an offer is no way around a forfeit: who grabbed an open unit meanwhile and cancelled it is refused, and the offer moves on', async () => {
    // Sold out to X and Y; A waits. X's return is offered to A; Y's, with nobody else waiting, goes to the open stock.
    const s = await soldOutSaleWithWaitlist(2, 1);
    const [a] = s.waiting;
    const [x, y] = s.buyers;
    expect((await cancel(x!, s.orderOf(x!))).status).toBe(200);
    expect(await offered(s.voucherId)).toEqual([a!.userId]);
    expect((await cancel(y!, s.orderOf(y!))).status).toBe(200);
    expect((await readSeckillState(redis, s.voucherId))!.remaining).toBe(1);
    // A, holding the offer, grabs the open unit too, then gives it back: A has forfeited the sale.
    const g = await grabVoucher(db, redis, { voucherId: s.voucherId, userId: a!.userId, ip: '10.9.9.9' });
    await waitPersisted(db, redis, s.voucherId, 3);
    const [b] = await createTestUsers(db, redis, 1);
    expect((await cancel(a!, g.orderId)).status).toBe(200);
    expect(await redis.sismember(keys.seckillForfeit(s.voucherId), a!.userId)).toBe(1);
    // B takes the unit A gave back (the open stock's, nobody was waiting); then B waits for the next.
    expect((await grabVoucher(db, redis, { voucherId: s.voucherId, userId: b!.userId, ip: '10.9.9.10' })).status).toBe('pending');
    const [c] = await createTestUsers(db, redis, 1);
    expect((await join(c!, s.voucherId)).status).toBe(200);
    // A's claim of the old offer is the grab's answer, FORFEITED, and sells nothing.
    const r = await claim(a!, s.voucherId);
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('FORFEITED');
    expect(await redis.sismember(keys.seckillBuyers(s.voucherId), a!.userId)).toBe(0);
    // The offer ended with that claim: the next pass gives its unit to C, who buys it.
    await expireOffers(redis, s.voucherId);
    expect(await offered(s.voucherId)).toEqual([c!.userId]);
    expect((await claim(c!, s.voucherId)).status).toBe(200);
    await waitPersisted(db, redis, s.voucherId, 5);
    await assertInvariants(s.voucherId, { drained: true });
  });

  it('an offer held by who bought an open unit meanwhile ends at their claim (ALREADY_BOUGHT), and the next pass moves its unit on at once', async () => {
    // Sold out to X and Y; A waits. X's return is offered to A; Y's, with nobody else waiting, goes to the open stock.
    const s = await soldOutSaleWithWaitlist(2, 1);
    const [a] = s.waiting;
    const [x, y] = s.buyers;
    expect((await cancel(x!, s.orderOf(x!))).status).toBe(200);
    expect((await cancel(y!, s.orderOf(y!))).status).toBe(200);
    expect(await offered(s.voucherId)).toEqual([a!.userId]);
    // The offer open for minutes, as in production (this file's offers last 2 s, for the expiry tests).
    await redis.zadd(keys.seckillOffers(s.voucherId), 'XX', Date.now() + 600_000, a!.userId);
    // A grabs the open unit instead of claiming: A is a buyer, the offer can never be claimed.
    expect((await grabVoucher(db, redis, { voucherId: s.voucherId, userId: a!.userId, ip: '10.9.9.9' })).status).toBe('pending');
    const [c] = await createTestUsers(db, redis, 1);
    expect((await join(c!, s.voucherId)).status).toBe(200);
    expect(await expireOffers(redis, s.voucherId)).toEqual({ expired: 0, offered: 0, toStock: 0 }); // still open
    const r = await claim(a!, s.voucherId);
    expect(r.status).toBe(409);
    expect(r.json.error.code).toBe('ALREADY_BOUGHT');
    // The claim ended it: the next pass offers the unit to C, ten minutes before the offer's own expiry.
    expect(await expireOffers(redis, s.voucherId)).toEqual({ expired: 1, offered: 1, toStock: 0 });
    expect(await offered(s.voucherId)).toEqual([c!.userId]);
    expect((await claim(c!, s.voucherId)).status).toBe(200);
    await waitPersisted(db, redis, s.voucherId, 4);
    await assertInvariants(s.voucherId, { drained: true });
  });

  it("a preheat between a cancel's commit and its Redis step leaves the unit to that return: offered to the first waiter, never put on open sale", async () => {
    const s = await soldOutSaleWithWaitlist(3, 2);
    const [first] = s.waiting;
    const x = s.buyers[0]!;
    // The cancel's MySQL half alone, as when its process dies before the Redis step: the return is owed.
    await db.transaction().execute(async (trx) => {
      expect(await markCancelled(trx, s.orderOf(x), 'buyer', env.ORDER_PAY_TIMEOUT_SECONDS)).toBe(true);
      expect(await returnStockRow(trx, s.voucherId)).toBe(true);
    });
    // A console edit, the draw or the repair after a Redis restart preheats meanwhile: the buyer
    // stays a buyer until the owed return runs (buyers = orders + pending + returns owed).
    await preheatVoucher(db, redis, s.voucherId);
    expect(await redis.sismember(keys.seckillBuyers(s.voucherId), x.userId)).toBe(1);
    expect((await readSeckillState(redis, s.voucherId))!).toMatchObject({ remaining: 0, buyers: 3, offers: 0 });
    await assertInvariants(s.voucherId);
    // The backstop completes the owed return: the unit is the first waiter's offer, not open stock.
    expect(await completeOwedReturns(db, redis, 0)).toBeGreaterThanOrEqual(1);
    expect(await offered(s.voucherId)).toEqual([first!.userId]);
    expect((await readSeckillState(redis, s.voucherId))!).toMatchObject({ remaining: 0, buyers: 2, offers: 1 });
    await assertInvariants(s.voucherId);
  });

  it('ten cancels racing five preheats: every unit is offered to a waiter in joining order, none reaches the open stock', async () => {
    const s = await soldOutSaleWithWaitlist(10, 10);
    const results = await Promise.all([...s.buyers.map((u) => cancel(u, s.orderOf(u))), ...Array.from({ length: 5 }, () => preheatVoucher(db, redis, s.voucherId))]);
    expect(results.slice(0, 10).map((r) => (r as { status: number }).status)).toEqual(Array(10).fill(200));
    await completeOwedReturns(db, redis, 0);
    expect((await offered(s.voucherId)).sort()).toEqual(s.waiting.map((u) => u.userId).sort());
    expect((await readSeckillState(redis, s.voucherId))!).toMatchObject({ remaining: 0, buyers: 0, offers: 10 });
    await assertInvariants(s.voucherId);
  });
});

describe('expiry', () => {
  it('a payment timeout gives its unit to the waitlist too; the worker\'s timer (startOfferExpiry) moves an expired offer on by itself', async () => {
    const s = await soldOutSaleWithWaitlist(1, 2);
    const [buyer] = s.buyers;
    await backdateOrder(db, s.orderOf(buyer!), 3600);
    expect(await cancelIfOverdue(db, redis, s.orderOf(buyer!), 60)).toBe('cancelled');
    expect(await offered(s.voucherId)).toEqual([s.waiting[0]!.userId]);
    const timer = startOfferExpiry({ redis, intervalMs: 200 });
    try {
      await sleep(2600);
      expect(await offered(s.voucherId)).toEqual([s.waiting[1]!.userId]);
    } finally {
      await timer.stop();
    }
    await assertInvariants(s.voucherId);
  });

  it('an expired offer moves on to the next waiter, then to stock; five passes at once move each unit once', async () => {
    const s = await soldOutSaleWithWaitlist(10, 14);
    await Promise.all(s.buyers.map((u) => cancel(u, s.orderOf(u))));
    expect(await offered(s.voucherId)).toHaveLength(10);
    // Nothing is due yet.
    expect(await expireOffers(redis, s.voucherId)).toEqual({ expired: 0, offered: 0, toStock: 0 });
    await sleep(2100);
    const passes = await Promise.all(Array.from({ length: 5 }, () => expireOffers(redis, s.voucherId)));
    const sum = passes.reduce((a, p) => ({ expired: a.expired + p.expired, offered: a.offered + p.offered, toStock: a.toStock + p.toStock }));
    expect(sum).toEqual({ expired: 10, offered: 4, toStock: 6 });
    expect((await offered(s.voucherId)).sort()).toEqual(s.waiting.slice(10).map((u) => u.userId).sort());
    expect((await readSeckillState(redis, s.voucherId))!).toMatchObject({ remaining: 6, offers: 4 });
    await assertInvariants(s.voucherId);
    const late = await claim(s.waiting[0]!, s.voucherId);
    expect(late.json.error.code).toBe('NO_OFFER');
    await sleep(2100);
    await expireOffers(redis, s.voucherId);
    expect((await readSeckillState(redis, s.voucherId))!).toMatchObject({ remaining: 10, offers: 0 });
    expect(await waitlistNumbers(redis, s.voucherId)).toMatchObject({ waiting: 0, offersOpen: 0, offered: 14, expired: 14 });
    await assertInvariants(s.voucherId, { drained: true });
  });

  it('claims racing the expiry pass at the expiry instant: each unit is claimed or moved on, never both', async () => {
    const s = await soldOutSaleWithWaitlist(20, 40);
    await Promise.all(s.buyers.map((u) => cancel(u, s.orderOf(u))));
    const holders = s.waiting.slice(0, 20);
    expect((await offered(s.voucherId)).sort()).toEqual(holders.map((u) => u.userId).sort());
    // Each holder claims within ±50 ms of its own offer's expiry (by Redis' clock), while expiry
    // passes run back to back: some claims land just before, some just after.
    const [sec, usec] = await redis.time();
    const skew = Number(sec) * 1000 + Math.floor(Number(usec) / 1000) - Date.now();
    const expiry = new Map<string, number>();
    const flat = await redis.zrange(keys.seckillOffers(s.voucherId), 0, -1, 'WITHSCORES');
    for (let i = 0; i < flat.length; i += 2) expiry.set(flat[i]!, Number(flat[i + 1]));
    let racing = true;
    const passes = (async () => {
      const all = [];
      while (racing) all.push(await expireOffers(redis, s.voucherId));
      return all;
    })();
    const claims = await Promise.all(
      holders.map(async (u, i) => {
        await sleep(Math.max(0, expiry.get(u.userId)! - skew - Date.now() - 50 + i * 5));
        return claim(u, s.voucherId);
      }),
    );
    racing = false;
    const moved = (await passes).reduce((a, p) => a + p.expired, 0);
    const won = claims.filter((r) => r.status === 200).length;
    for (const r of claims) if (r.status !== 200) expect(['OFFER_EXPIRED', 'NO_OFFER']).toContain(r.json.error.code);
    expect(won + moved).toBe(20);
    const n = await waitlistNumbers(redis, s.voucherId);
    expect(n.claimed).toBe(won);
    expect(n.expired).toBe(moved);
    expect(n.offered).toBe(20 + moved); // every moved unit went to the next waiter (20 more wait)
    await waitPersisted(db, redis, s.voucherId, 20 + won);
    await assertInvariants(s.voucherId);
    // The rest leave; the second wave, never claimed, expires and its units go back to the stock.
    await Promise.all(s.waiting.slice(20).map((u) => leave(u, s.voucherId)));
    await sleep(2100);
    expect((await expireOffers(redis, s.voucherId)).toStock).toBe(moved);
    const end = (await readSeckillState(redis, s.voucherId))!;
    expect(end.offers).toBe(0);
    expect(end.remaining).toBe(20 - won);
    await assertInvariants(s.voucherId, { drained: true });
  }, 30_000);
});

describe('per-sale numbers', () => {
  it('/metrics and the console show grabs accepted / refused, waitlist length and offers; the badge counts offers', async () => {
    const s = await soldOutSaleWithWaitlist(3, 4);
    const [late] = await createTestUsers(db, redis, 1);
    await expect(grabVoucher(db, redis, { voucherId: s.voucherId, userId: late!.userId, ip: '10.9.9.9' })).rejects.toMatchObject({ code: 'SOLD_OUT' });
    await cancel(s.buyers[0]!, s.orderOf(s.buyers[0]!));
    const text = await register.metrics();
    const line = (name: string, labels: string) => new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1];
    expect(line('hmdp_sale_grabs_total', `voucher="${s.voucherId}",outcome="accepted"`)).toBe('3');
    expect(line('hmdp_sale_grabs_total', `voucher="${s.voucherId}",outcome="refused"`)).toBe('1');
    expect(line('hmdp_sale_waitlist', `voucher="${s.voucherId}"`)).toBe('3');
    expect(line('hmdp_sale_offers_open', `voucher="${s.voucherId}"`)).toBe('1');
    expect(line('hmdp_sale_offers_total', `voucher="${s.voucherId}",outcome="offered"`)).toBe('1');
    const live = await readLiveStock(db, redis, s.voucherId);
    expect(live.sale).toMatchObject({ waiting: 3, offersOpen: 1, offered: 1, claimed: 0, expired: 0, reserved: 0, grabsAccepted: 3, grabsRefused: 1, room: null });
    expect(live.consistency.differences.filter((d) => d.rule === 'redis-stock')).toEqual([]);
  });
});
