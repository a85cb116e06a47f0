/**
 * The live stock numbers and verdict against real Redis, MySQL and RabbitMQ: consistent when
 * idle, draining while orders wait for the worker, consistent again after the drain, and
 * inconsistent (naming the rule) when Redis is tampered with; plus the SSE stream of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { keys } from '@/lib/redis/keys';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { GET as liveRoute } from '@/app/api/admin/vouchers/[id]/stock/route';
import { GET as streamRoute } from '@/app/api/admin/vouchers/[id]/stock/stream/route';
import { POST as preheatRoute } from '@/app/api/admin/vouchers/[id]/preheat/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { startOrderWorker, type OrderWorker } from '@/lib/order/worker';
import { createTestUsers, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

let f: ConsoleFixture;
let users: TestUser[];
let worker: OrderWorker | undefined;
const ipBase = Math.floor(Math.random() * 200);

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  users = await createTestUsers(db, redis, 10);
});
afterAll(async () => {
  await worker?.stop();
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

async function create(stock: number): Promise<string> {
  const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock }) });
  expect(r.status).toBe(201);
  return r.json.data.id;
}
const live = async (id: string) => (await callRoute(liveRoute, { token: f.merchantA.token, params: { id } })).json.data;
const grab = (u: TestUser, voucherId: string, i: number) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.${ipBase}.7.${i}` } });

describe('live stock', () => {
  it('a flash sale created with 3 stock buckets shows each bucket; bad bucket counts, or buckets on a reservation-only sale, are 400 naming the field', async () => {
    const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 7, buckets: 3 }) });
    expect(r.status).toBe(201);
    const id = r.json.data.id as string;
    const s = await live(id);
    expect(s.numbers).toMatchObject({ initial: 7, redisRemaining: 7, inFlight: 0, buckets: [{ initial: 3 }, { initial: 2 }, { initial: 2 }] });
    expect(s.consistency.status).toBe('consistent');
    expect((await live((await create(2)) as string)).numbers.buckets).toBeNull();
    for (const buckets of [0, 17, 1.5, '3']) {
      const bad = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 7, title: `bad buckets ${String(buckets)}`, buckets }) });
      expect(bad.status).toBe(400);
      expect(bad.json.error.fields).toHaveProperty('buckets');
    }
    const gated = await callRoute(createRoute, {
      token: f.merchantA.token,
      body: seckillBody(f.shopA, { stock: 7, buckets: 2, reservation: { mode: 'draw', reserveBegin: new Date().toISOString() } }),
    });
    expect(gated.status).toBe(400);
    expect(gated.json.error.fields).toHaveProperty('buckets');
  });

  it('idle → consistent; grabs with no worker → draining; worker drains → consistent', async () => {
    const id = await create(5);
    const idle = await live(id);
    expect(idle.consistency).toEqual({ status: 'consistent', differences: [] });
    expect(idle.numbers).toMatchObject({ initial: 5, redisRemaining: 5, buyers: 0, pending: 0, dbInitial: 5, dbRemaining: 5, dbOrders: 0, deadLetters: 0 });

    // No worker is consuming yet: the accepted orders wait in the outbox and the queue.
    for (let i = 0; i < 3; i++) expect((await grab(users[i]!, id, i)).status).toBe(200);
    // A grab answers once its order is in the outbox; the publish follows (lib/seckill/publish-batch.ts).
    const busy = await waitFor('three orders on the queue', async () => {
      const s = await live(id);
      return s.numbers.queueDepth >= 3 ? s : null;
    });
    expect(busy.numbers).toMatchObject({ redisRemaining: 2, buyers: 3, pending: 3, dbOrders: 0 });
    expect(busy.consistency.status).toBe('draining');

    worker = await startOrderWorker({ batchWaitMs: 5, sweepIntervalMs: 1000, staleMs: 3000, retryBaseMs: 200, maxAttempts: 3 });
    const done = await waitFor('drain', async () => {
      const s = await live(id);
      return s.consistency.status === 'consistent' ? s : null;
    });
    expect(done.numbers).toMatchObject({ initial: 5, redisRemaining: 2, buyers: 3, pending: 0, dbRemaining: 2, dbOrders: 3 });
  });

  it('a buyer lost from Redis → inconsistent, naming the rules; preheat repairs it', async () => {
    const id = await create(4);
    expect((await grab(users[5]!, id, 5)).status).toBe(200);
    await waitFor('drain', async () => (await live(id)).consistency.status === 'consistent');
    await redis.srem(keys.seckillBuyers(id), users[5]!.userId);
    const broken = await live(id);
    expect(broken.consistency.status).toBe('inconsistent');
    expect(broken.consistency.differences.map((d: { rule: string }) => d.rule)).toEqual(expect.arrayContaining(['redis-stock', 'buyers-orders']));

    const repaired = await callRoute(preheatRoute, { token: f.merchantA.token, params: { id }, method: 'POST' });
    expect(repaired.status).toBe(200);
    expect(repaired.json.data).toEqual({ initial: 4, remaining: 3, buyers: 1 });
    expect((await live(id)).consistency.status).toBe('consistent');
  });

  it('not preheated → inconsistent with a hint', async () => {
    const id = await create(2);
    await redis.del(keys.seckillMeta(id), keys.seckillStock(id));
    const s = await live(id);
    expect(s.consistency.differences[0].rule).toBe('not-preheated');
  });

  it('normal vouchers have no live stock (409)', async () => {
    const r = await callRoute(createRoute, { token: f.merchantA.token, body: { shopId: f.shopA, title: 'n', payValue: 1, actualValue: 2, type: 0 } });
    expect((await callRoute(liveRoute, { token: f.merchantA.token, params: { id: r.json.data.id } })).status).toBe(409);
  });

  it('the stream sends stock events about every second and ends when the client goes away', async () => {
    const id = await create(3);
    const ac = new AbortController();
    const req = new Request(`http://localhost/api/admin/vouchers/${id}/stock/stream`, { headers: { authorization: `Bearer ${f.merchantA.token}` }, signal: ac.signal });
    const res = await streamRoute(req, { params: Promise.resolve({ id }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    const started = Date.now();
    while ((text.match(/event: stock/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThan(700);
    expect(elapsed).toBeLessThan(4000);
    const first = JSON.parse(/event: stock\ndata: (.*)\n/.exec(text)![1]!);
    expect(first.stock).toMatchObject({ voucherId: id, numbers: { initial: 3 }, consistency: { status: 'consistent' } });
    expect(first.series).toMatchObject({ bucketSeconds: 1, points: [] });
    ac.abort();
    for (;;) if ((await reader.read()).done) break;
  });
});
