/**
 * The waiting room opens by itself (docs/fair-sale.md#opening-by-itself): a hot server with two
 * slots, a burst of real concurrent grabs of an ordinary sale → it sheds them → the sale's room
 * opens; meanwhile a grab needs a token (and one through the room wins), and once the room lapses
 * grabs are open again. A merchant's room is never turned into one that lapses.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_AUTO_SHED_PER_SECOND: '5', ROOM_AUTO_OPEN_MS: '3000', ROOM_POW_COST: '1000', ROOM_ADMIT_PER_SECOND: '1000' }));

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { createHotServer } from '@/lib/hot/server';
import { route } from '@/lib/http/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { createTestUsers, createTestVoucher, waitDrained, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { callChallenge, callJoin, callLook, callToken, createRoomVoucher, solvedPayload } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';
import { grabShed, openRoomByItself } from '@/lib/seckill/room/auto-open';
import { isKnownRoomSale } from '@/lib/seckill/room/room-memory';

const servers: http.Server[] = [];
const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });

beforeAll(suite.start);

afterAll(async () => {
  for (const s of servers) s.close();
  await suite.end();
});

const grab = (u: TestUser, voucherId: string, g?: string) => callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, query: g === undefined ? {} : { g } });

describe('the room opens by itself', () => {
  it('when a two-slot hot server sheds a burst of grabs of an ordinary sale', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    // A grab route that holds its slot for 300 ms: 30 at once overflow two slots.
    const slow = route<'none', { voucherId: string }>({ auth: 'none' }, () => new Promise((r) => setTimeout(() => r({ ok: true }), 300)));
    const shed: string[] = [];
    const server = createHotServer({
      routes: [{ name: 'grab', method: 'POST', path: '/api/seckill/[voucherId]', handler: slow }],
      maxInFlight: 2,
      fallback: (_req, res) => res.end(),
      onShed: (name, params) => {
        shed.push(`${name}:${params.voucherId}`);
        if (name === 'grab') grabShed(redis, params.voucherId);
      },
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`http://127.0.0.1:${port}/api/seckill/${voucherId}`, { method: 'POST' }).then((r) => r.status)),
    );
    const refused = statuses.filter((s) => s === 503).length;
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(shed).toHaveLength(refused);
    expect(new Set(shed)).toEqual(new Set([`grab:${voucherId}`]));
    await waitFor('the room opened', async () => (await redis.hget(keys.seckillMeta(voucherId), 'roomUntil')) !== null, 5000);
    expect(await redis.hget(keys.seckillMeta(voucherId), 'room')).toBe('1');
  });

  it('grabs need a token while it is open (one through the room wins); once it lapses, grabs are open again', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [a, b, c] = await createTestUsers(db, redis, 3);
    expect((await grab(c!, voucherId)).status).toBe(200); // an ordinary sale
    expect(await openRoomByItself(redis, voucherId, 2500)).toBe(true);
    const opened = Date.now();
    expect((await grab(a!, voucherId)).json.error.code).toBe('NEED_TICKET');
    // Not remembered: it lapses, so each token-less grab asks the script.
    expect(isKnownRoomSale(voucherId)).toBe(false);

    const j = await callJoin(a!, voucherId);
    expect(j.status).toBe(200);
    await waitFor('admitted', async () => (await callLook(a!, voucherId)).json.data.state === 'admitted', 5000, 50);
    const ch = await callChallenge(a!, voucherId);
    expect(ch.json.maxnumber).toBe(1000);
    const pass = await callToken(a!, voucherId, { ticket: j.json.data.ticket, altcha: await solvedPayload(ch.json) });
    expect(pass.status).toBe(200);
    expect((await grab(a!, voucherId, pass.json.data.token)).status).toBe(200);

    await new Promise((r) => setTimeout(r, Math.max(0, opened + 2600 - Date.now())));
    expect((await grab(b!, voucherId)).status).toBe(200);
    expect((await callJoin(b!, voucherId)).status).toBe(404);
  });

  it('a room that lapsed and opens again counts the units bought meanwhile as gone, not as its holders\' wins: no more holders than units', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [a, b, c, d, e] = await createTestUsers(db, redis, 5);
    const look = (u: TestUser) => callLook(u, voucherId);
    const join = (u: TestUser) => callJoin(u, voucherId);
    expect(await openRoomByItself(redis, voucherId, 60_000)).toBe(true);
    const ja = await join(a!);
    await waitFor('a admitted', async () => (await look(a!)).json.data.state === 'admitted', 5000, 20);
    // The room lapses (nobody sheds any more): open to everyone, two others buy; one unit is left, A's to hold.
    await redis.hset(keys.seckillMeta(voucherId), 'roomUntil', String(Date.now() - 1));
    expect((await grab(b!, voucherId)).status).toBe(200);
    expect((await grab(c!, voucherId)).status).toBe(200);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('1');
    // The box sheds again: the room opens again; newcomers wait behind A's hold, they are not admitted.
    expect(await openRoomByItself(redis, voucherId, 60_000)).toBe(true);
    await join(d!);
    await join(e!);
    await new Promise((r) => setTimeout(r, 150)); // at 1000 a second the counter would reach them long before
    expect((await look(a!)).json.data.state).toBe('admitted');
    for (const u of [d!, e!]) expect((await look(u)).json.data).toMatchObject({ state: 'waiting', allHeld: true });
    // A buys within the hold, and wins: the last unit was A's.
    const ch = await callChallenge(a!, voucherId);
    const pass = await callToken(a!, voucherId, { ticket: ja.json.data.ticket, altcha: await solvedPayload(ch.json) });
    expect((await grab(a!, voucherId, pass.json.data.token)).status).toBe(200);
    expect((await look(d!)).json.data.state).toBe('soldout');
  });

  it('a unit bought and given back while the room lapsed is not counted as its holders\' win either', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 3 });
    const [a, b, d, e, f] = await createTestUsers(db, redis, 5);
    const look = (u: TestUser) => callLook(u, voucherId);
    expect(await openRoomByItself(redis, voucherId, 60_000)).toBe(true);
    await callJoin(a!, voucherId);
    await waitFor('a admitted', async () => (await look(a!)).json.data.state === 'admitted', 5000, 20);
    // Lapsed: b buys and cancels (the unit back to the open stock, counted in the meta's back).
    await redis.hset(keys.seckillMeta(voucherId), 'roomUntil', String(Date.now() - 1));
    const bought = await grab(b!, voucherId);
    expect(bought.status).toBe(200);
    await waitDrained(db, redis, voucherId, 1);
    expect((await callRoute(cancelRoute, { method: 'POST', token: b!.token, params: { id: bought.json.data.orderId } })).status).toBe(200);
    expect(await redis.get(keys.seckillStock(voucherId))).toBe('3');
    // Open again: three units, A holds one; d and e take the other two, f waits. Moving w0 on by the
    // buyers alone, b's unit counted as the room's win and f was admitted too: four holders, three units.
    expect(await openRoomByItself(redis, voucherId, 60_000)).toBe(true);
    for (const u of [d!, e!, f!]) await callJoin(u, voucherId);
    await new Promise((r) => setTimeout(r, 150));
    for (const u of [a!, d!, e!]) expect((await look(u)).json.data.state).toBe('admitted');
    expect((await look(f!)).json.data).toMatchObject({ state: 'waiting', ahead: 0, allHeld: true });
  });

  it('not below the threshold, and never over a merchant room', async () => {
    const plain = await createTestVoucher(db, redis, { stock: 5 });
    for (let i = 0; i < 4; i++) grabShed(redis, plain);
    await new Promise((r) => setTimeout(r, 200));
    expect(await redis.hget(keys.seckillMeta(plain), 'room')).toBeNull();
    const merchants = await createRoomVoucher(db, redis, { stock: 5 });
    expect(await openRoomByItself(redis, merchants)).toBe(false);
    expect(await redis.hmget(keys.seckillMeta(merchants), 'room', 'roomUntil')).toEqual(['1', null]);
  });
});
