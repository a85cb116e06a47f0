/**
 * What a 200 from the grab means (docs/flash-sale.md#what-a-200-means): its order message is in RabbitMQ, confirmed.
 * The web side reaches the broker through a TCP proxy this file cuts (a broker that refuses) or
 * replaces with a black hole (a broker that never answers): those grabs answer 503 and give their
 * unit back, nothing is written. A grab answered 200 survives Redis forgetting it entirely: the
 * worker (started afterwards, on its own direct connection) writes it from the queue alone. And a
 * message the broker took whose confirm was lost is voided before its unit goes back: never written.
 * A unit given back while people wait on the waitlist is offered to the first of them; a claimed
 * offer whose order cannot be published goes back to its claimer.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:3610';
  process.env.PUBLISH_CONFIRM_TIMEOUT_MS = '700';
});

import net from 'node:net';
import { randomInt } from 'node:crypto';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq, connectMq } from '@/lib/mq/connection';
import { names } from '@/lib/mq/topology';
import { keys } from '@/lib/redis/keys';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { GET as orderRoute } from '@/app/api/orders/[id]/route';
import { POST as joinWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { POST as claimWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/claim/route';
import { releaseOrder } from '@/lib/seckill/outbox';
import { giveBackUnconfirmed, runGrabScript } from '@/lib/seckill/grab';
import { nextOrderId } from '@/lib/id';
import { parseOrderMessage, type OrderMessage } from '@/lib/seckill/message';
import { publishOrder } from '@/lib/seckill/publish';
import { PublishUnconfirmedError } from '@/lib/seckill/publish-batch';
import { AppError } from '@/lib/errors';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { TcpProxy } from '@/e2e/support/tcp-proxy';
import { createTestUsers, createTestVoucher, waitFor, type TestUser, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';

const PROXY_PORT = 3610;
const mqProxy = new TcpProxy(PROXY_PORT, 5672);
let worker: OrderWorker | undefined;

beforeAll(async () => {
  await mqProxy.start();
});

afterAll(async () => {
  await worker?.stop();
  await waitOutShortLivedKeys(redis);
  await closeMq();
  await Promise.all([mqProxy.close(), closeDb(), closeRedis()]);
});

const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.31.${randomInt(0, 255)}.${randomInt(1, 255)}` } });

const ordersOf = (voucherId: string) => db.selectFrom('tb_voucher_order').select(['id', 'user_id']).where('voucher_id', '=', voucherId).execute();

/** Grabs until one is accepted: the publisher reconnects after an outage on its own. */
async function grabUntilAccepted(u: TestUser, voucherId: string) {
  return waitFor('a grab accepted once the broker is back', async () => {
    const r = await grab(u, voucherId);
    if (r.status === 200) return r;
    expect([503, 429]).toContain(r.status);
    await new Promise((res) => setTimeout(res, 1000)); // Retry-After: 1, as the grab box waits
    return null;
  }, 15_000, 0);
}

/** A "broker" that accepts TCP connections and never says a word. */
async function blackHole(port: number): Promise<net.Server> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  }) as typeof server.close;
  return server;
}

describe('a 200 means the order is in RabbitMQ', () => {
  it('the broker refuses: 503 with Retry-After, the unit back in Redis, nothing in MySQL', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [a, b] = await createTestUsers(db, redis, 2);
    // Warm: one grab through the live proxy, so the cut below kills an open connection.
    const ok = await grab(a!, voucherId);
    expect(ok.status).toBe(200);
    const before = await readSeckillState(redis, voucherId);
    expect(before).toMatchObject({ remaining: 4, buyers: 1, pending: 1 });

    await mqProxy.cut();
    const results = await Promise.all([grab(b!, voucherId), grab(b!, voucherId)]);
    const refused = results.find((r) => r.status === 503);
    expect(refused?.json.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Both 503: the second is never told ALREADY_BOUGHT about a unit the first then gives back.
    for (const r of results) expect(r.status).toBe(503);
    expect(await readSeckillState(redis, voucherId)).toEqual(before);
    expect(await redis.sismember(keys.seckillBuyers(voucherId), b!.userId)).toBe(0);

    // A broker that takes the connection and never answers: the confirm wait is bounded.
    const hole = await blackHole(PROXY_PORT);
    await closeMq();
    try {
      const t0 = Date.now();
      const r = await grab(b!, voucherId);
      expect([r.status, r.json.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(await readSeckillState(redis, voucherId)).toEqual(before);
    } finally {
      await new Promise((r) => hole.close(() => r(null)));
      await closeMq();
    }

    // Broker back: the buyer's retry is accepted; only the two accepted grabs are ever written.
    await mqProxy.restore();
    const retried = await grabUntilAccepted(b!, voucherId);
    worker = await startOrderWorker({ rabbitUrl: 'amqp://guest:guest@127.0.0.1:5672', batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1500 });
    await waitFor('two orders in MySQL, outbox empty', async () => {
      const [s, c] = await Promise.all([readSeckillState(redis, voucherId), dbStockCounts(db, voucherId)]);
      return s?.pending === 0 && c?.orders === 2;
    });
    const orders = await ordersOf(voucherId);
    expect(orders.map((o) => o.id).sort()).toEqual([ok.json.data.orderId, retried.json.data.orderId].sort());
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 3, dbStock: 3, dbOrders: 2, buyers: 2, oversold: 0, duplicates: 0 });
  });

  it('a second grab while the first still waits for its confirm: 503, not ALREADY_BOUGHT about a unit that then goes back', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [u] = await createTestUsers(db, redis, 1);
    const before = await readSeckillState(redis, voucherId);
    await mqProxy.cut();
    const hole = await blackHole(PROXY_PORT); // the confirm never comes: the first grab waits 700 ms
    await closeMq();
    try {
      const first = grab(u!, voucherId);
      await waitFor('the first grab holds the unit', async () => (await redis.sismember(keys.seckillBuyers(voucherId), u!.userId)) === 1, 600, 10);
      const second = await grab(u!, voucherId);
      expect([second.status, second.json.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const r1 = await first;
      expect([r1.status, r1.json.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      // The unit went back: the buyer was told to retry, twice, and nothing else.
      expect(await readSeckillState(redis, voucherId)).toEqual(before);
    } finally {
      await new Promise((r) => hole.close(() => r(null)));
      await closeMq();
      await mqProxy.restore();
    }
    const retried = await grabUntilAccepted(u!, voucherId);
    expect(retried.status).toBe(200);
  });

  it('a grab that gives its unit back while people wait on the waitlist: the unit is offered to the first of them, not put on open sale; a claim that cannot publish gives the offer back to its claimer', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 1 });
    const [x, w] = await createTestUsers(db, redis, 2);
    await mqProxy.cut();
    const hole = await blackHole(PROXY_PORT); // X's confirm never comes: X's grab waits 700 ms holding the last unit
    await closeMq();
    try {
      const first = grab(x!, voucherId);
      await waitFor('X holds the last unit', async () => (await redis.sismember(keys.seckillBuyers(voucherId), x!.userId)) === 1, 600, 10);
      // Sold out meanwhile: W joins the waitlist.
      const joined = await callRoute(joinWaitlistRoute, { method: 'POST', token: w!.token, params: { voucherId } });
      expect(joined.json.data?.me).toEqual({ state: 'waiting', position: 1 });
      const r = await first;
      expect([r.status, r.json.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      // The unit X gave back is W's offer; the open stock stays 0, so no grab can take it past W.
      expect(await redis.zrange(keys.seckillOffers(voucherId), 0, -1)).toEqual([w!.userId]);
      expect(await readSeckillState(redis, voucherId)).toMatchObject({ remaining: 0, buyers: 0, pending: 0, offers: 1 });
      expect(await redis.zcard(keys.seckillWaitlist(voucherId))).toBe(0);
      await assertInvariants(voucherId);
      // W claims while the broker still says nothing: 503, and the offer is W's again (a retry can
      // succeed), not passed on or put on open sale; the claim is counted as given back.
      const expiry = Number(await redis.zscore(keys.seckillOffers(voucherId), w!.userId));
      const c = await callRoute(claimWaitlistRoute, { method: 'POST', token: w!.token, params: { voucherId } });
      expect([c.status, c.json.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
      expect(await redis.zrange(keys.seckillOffers(voucherId), 0, -1)).toEqual([w!.userId]);
      expect(Number(await redis.zscore(keys.seckillOffers(voucherId), w!.userId))).toBeGreaterThanOrEqual(expiry);
      expect(await redis.hmget(keys.seckillWaitStats(voucherId), 'claimed', 'claimsBack')).toEqual(['1', '1']);
      expect(await readSeckillState(redis, voucherId)).toMatchObject({ remaining: 0, buyers: 0, pending: 0, offers: 1 });
      await assertInvariants(voucherId);
    } finally {
      await new Promise((r) => hole.close(() => r(null)));
      await closeMq();
      await mqProxy.restore();
    }
    // Broker back: W claims the offer, and theirs is the one order written.
    const claimed = await waitFor('W claims once the broker is back', async () => {
      const c = await callRoute(claimWaitlistRoute, { method: 'POST', token: w!.token, params: { voucherId } });
      if (c.status === 200) return c;
      expect(c.status).toBe(503);
      await new Promise((res) => setTimeout(res, 1000));
      return null;
    }, 15_000, 0);
    worker ??= await startOrderWorker({ rabbitUrl: 'amqp://guest:guest@127.0.0.1:5672', batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1500 });
    await waitFor('W\'s order written', async () => (await ordersOf(voucherId)).length === 1 || null);
    expect(await ordersOf(voucherId)).toEqual([{ id: claimed.json.data.orderId, user_id: w!.userId }]);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 0, dbStock: 0, dbOrders: 1, buyers: 1, offers: 0 });
  });

  it('Redis forgets an answered grab entirely (outbox entry, buyer, unit): the worker still writes it from the queue', async () => {
    await worker?.stop();
    worker = undefined;
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [u] = await createTestUsers(db, redis, 1);
    const res = await grab(u!, voucherId);
    expect(res.status).toBe(200);
    const orderId: string = res.json.data.orderId;

    // The forgetful Redis: a failover to a replica that never saw this grab.
    expect(await releaseOrder(redis, voucherId, orderId, u!.userId)).toBe(true);
    expect(await readSeckillState(redis, voucherId)).toMatchObject({ remaining: 3, buyers: 0, pending: 0 });
    // Nothing on the Redis side remembers the order; the durable queue does.
    const conn = await connectMq('amqp://guest:guest@127.0.0.1:5672');
    try {
      const ch = await conn.createChannel();
      expect((await ch.checkQueue(names.ordersQueue)).messageCount).toBeGreaterThanOrEqual(1);
    } finally {
      await conn.close();
    }

    worker = await startOrderWorker({ rabbitUrl: 'amqp://guest:guest@127.0.0.1:5672', batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1500 });
    await waitFor('the forgotten order in MySQL', async () => (await ordersOf(voucherId)).some((o) => o.id === orderId));
    const poll = await callRoute(orderRoute, { token: u!.token, params: { id: orderId } });
    expect(poll.json.data).toMatchObject({ id: orderId, state: 'created' });
  });

  it('a message the broker took whose confirm was lost: the 503 voids it first, the worker never writes it', async () => {
    await worker?.stop();
    worker = undefined;
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [u, marker, late, never] = await createTestUsers(db, redis, 4);
    const accept = async (userId: string): Promise<OrderMessage> => {
      const orderId = await nextOrderId(redis);
      const [code, payload] = await runGrabScript(redis, { voucherId, userId, orderId });
      expect(code).toBe(0);
      const parsed = parseOrderMessage(payload!);
      if (!parsed.ok) throw new Error(parsed.reason);
      return parsed.msg;
    };
    const lostConfirm = new PublishUnconfirmedError('confirm lost', true);
    const initial = await readSeckillState(redis, voucherId);

    // In the queue, but the grab never heard the confirm.
    const msg = await accept(u!.userId);
    await publishOrder(msg, 5000);
    const err = await giveBackUnconfirmed(db, redis, msg, lostConfirm).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('SERVICE_UNAVAILABLE');
    expect(await readSeckillState(redis, voucherId)).toEqual(initial);
    expect(await db.selectFrom('tb_order_failure').select(['order_id', 'reason']).where('order_id', '=', msg.orderId).execute()).toEqual([{ order_id: msg.orderId, reason: 'UNCONFIRMED' }]);

    // Never handed to the broker: no MySQL write needed, the unit simply goes back.
    const unsent = await accept(never!.userId);
    await expect(giveBackUnconfirmed(db, redis, unsent, new PublishUnconfirmedError('no channel', false))).rejects.toBeInstanceOf(AppError);
    expect(await db.selectFrom('tb_order_failure').select('order_id').where('order_id', '=', unsent.orderId).execute()).toEqual([]);
    expect(await readSeckillState(redis, voucherId)).toEqual(initial);

    // Never handed over, and Redis forgot the entry meanwhile: no order anywhere, so it is voided → 503.
    const vanished = await accept(never!.userId);
    expect(await releaseOrder(redis, voucherId, vanished.orderId, never!.userId)).toBe(true);
    await expect(giveBackUnconfirmed(db, redis, vanished, new PublishUnconfirmedError('no channel', false))).rejects.toBeInstanceOf(AppError);
    expect(await db.selectFrom('tb_order_failure').select(['order_id', 'reason']).where('order_id', '=', vanished.orderId).execute()).toEqual([{ order_id: vanished.orderId, reason: 'UNCONFIRMED' }]);
    expect(await readSeckillState(redis, voucherId)).toEqual(initial);

    // A grab behind it in the queue marks when the worker has been through the voided message.
    const next = await grab(marker!, voucherId);
    expect(next.status).toBe(200);
    worker = await startOrderWorker({ rabbitUrl: 'amqp://guest:guest@127.0.0.1:5672', batchWaitMs: 5, sweepIntervalMs: 500, staleMs: 1500 });
    await waitFor('the marker order written', async () => (await ordersOf(voucherId)).length === 1 || null);
    expect((await ordersOf(voucherId)).map((o) => o.id)).toEqual([next.json.data.orderId]);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 2, dbStock: 2, dbOrders: 1, buyers: 1, oversold: 0, duplicates: 0 });

    // The reverse race: the worker wrote the order before the grab gave up on its confirm → 200 stands.
    const ok = await grab(late!, voucherId);
    expect(ok.status).toBe(200);
    await waitFor('written', async () => (await ordersOf(voucherId)).length === 2 || null);
    const written: OrderMessage = { v: 1, orderId: ok.json.data.orderId, userId: late!.userId, voucherId, at: Date.now() };
    expect(await giveBackUnconfirmed(db, redis, written, lostConfirm)).toEqual({ orderId: written.orderId, status: 'pending' });
    expect(await db.selectFrom('tb_order_failure').select('order_id').where('order_id', '=', written.orderId).execute()).toEqual([]);
    expect(await assertInvariants(voucherId, { drained: true })).toMatchObject({ redisStock: 1, dbStock: 1, dbOrders: 2, buyers: 2 });
  });
});
