/**
 * A room sale's waitlist (docs/fair-sale.md#a-room-sales-waitlist) through the real routes, worker,
 * MySQL, Redis/Lua and RabbitMQ: the waitlist is no way round the room. Joining asks for the bot
 * gate passed (in the room, or with a solution handed to the join), and the list is served in the
 * room's place order, with whoever never took a ticket behind every ticket holder, whatever order
 * they joined in. A script account that skipped the room joined first and still gets the returned
 * unit last.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const saved = await vi.hoisted(async () => (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '20' }));

import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { GET as viewRoute, POST as joinWaitlistRoute } from '@/app/api/seckill/[voucherId]/waitlist/route';
import { POST as cancelRoute } from '@/app/api/orders/[id]/cancel/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { createTestUsers, waitDrained, type TestUser } from '@/e2e/support/fixtures/seckill';
import { buyThroughRoom, callJoin, createRoomVoucher, solveGate } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';

const suite = orderWorkerSuite({ waitOutKeys: true, env: saved });
beforeAll(suite.start);
afterAll(suite.end);

const joinWaitlist = (u: TestUser, voucherId: string, altcha?: string) =>
  callRoute(joinWaitlistRoute, { method: 'POST', token: u.token, params: { voucherId }, body: altcha === undefined ? undefined : { altcha } });
const waitlistOf = (u: TestUser, voucherId: string) => callRoute(viewRoute, { method: 'GET', token: u.token, params: { voucherId } });
const positionOf = async (u: TestUser, voucherId: string) => (await waitlistOf(u, voucherId)).json.data.me;

describe("a room sale's waitlist", () => {
  it('asks for the gate passed and serves the room places first: a script that skipped the room and joined first gets the returned unit last', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 1 });
    const [a, p1, p2, p3, script, late] = await createTestUsers(db, redis, 6);

    // a takes place 1 and buys the one unit; p1..p3 take places 2..4 meanwhile (p2 and p3 pass the
    // gate while waiting, p1 does not); the script and the latecomer never take a ticket.
    const ja = await callJoin(a!, voucherId);
    expect(ja.json.data.position).toBe(1);
    for (const [i, p] of [p1!, p2!, p3!].entries()) {
      const altcha = p === p1 ? undefined : await solveGate(p, voucherId);
      const j = await callJoin(p, voucherId, altcha === undefined ? undefined : { altcha });
      expect(j.status).toBe(200);
      expect(j.json.data.position).toBe(i + 2);
    }
    const orderId = await buyThroughRoom(a!, voucherId, ja.json.data.ticket);
    await waitDrained(db, redis, voucherId, 1);

    // The page learns the gate is still to pass; the waitlist route refuses a join without it and writes nothing.
    expect((await waitlistOf(script!, voucherId)).json.data).toMatchObject({ gate: true, me: { state: 'none' } });
    expect((await waitlistOf(p2!, voucherId)).json.data.gate).toBe(false);
    const stats = await redis.hgetall(keys.seckillWaitStats(voucherId));
    const bare = await joinWaitlist(script!, voucherId);
    expect(bare.status).toBe(403);
    expect(bare.json.error.code).toBe('POW_FAILED');
    // Someone else's solution is no pass either.
    const borrowed = await joinWaitlist(script!, voucherId, await solveGate(late!, voucherId));
    expect(borrowed.status).toBe(403);
    expect(await redis.zcard(keys.seckillWaitlist(voucherId))).toBe(0);
    expect(await redis.hgetall(keys.seckillWaitStats(voucherId))).toEqual(stats);

    // The script solves its own gate and joins first of all: the head, for now.
    const scriptSolution = await solveGate(script!, voucherId);
    expect((await joinWaitlist(script!, voucherId, scriptSolution)).json.data.me).toEqual({ state: 'waiting', position: 1 });
    // Its solution is spent: the latecomer cannot use it, nor can the script's second device.
    expect((await joinWaitlist(late!, voucherId, scriptSolution)).json.error.code).toBe('POW_FAILED');
    // p3 passed the gate in the room: joins with no solution and goes ahead of the script (place 4).
    expect((await joinWaitlist(p3!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 1 });
    expect(await positionOf(script!, voucherId)).toEqual({ state: 'waiting', position: 2 });
    // p1 holds place 2 but never passed the gate: refused, then joins with a solution, ahead of all.
    expect((await joinWaitlist(p1!, voucherId)).json.error.code).toBe('POW_FAILED');
    expect((await joinWaitlist(p1!, voucherId, await solveGate(p1!, voucherId))).json.data.me).toEqual({ state: 'waiting', position: 1 });
    // An honest latecomer solves the gate and queues behind the script (both without a place, in joining order).
    expect((await joinWaitlist(late!, voucherId, await solveGate(late!, voucherId))).json.data.me).toEqual({ state: 'waiting', position: 4 });
    expect((await joinWaitlist(p2!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 2 });
    // A second join keeps the place (idempotent) and spends nothing.
    expect((await joinWaitlist(p1!, voucherId)).json.data.me).toEqual({ state: 'waiting', position: 1 });
    expect(await redis.zrange(keys.seckillWaitlist(voucherId), 0, -1)).toEqual([p1!.userId, p2!.userId, p3!.userId, script!.userId, late!.userId]);

    // a cancels: the returned unit is offered to p1, the earliest room place, not to the first to join.
    const cancelled = await callRoute(cancelRoute, { method: 'POST', token: a!.token, params: { id: orderId } });
    expect(cancelled.status).toBe(200);
    expect(await redis.zrange(keys.seckillOffers(voucherId), 0, -1)).toEqual([p1!.userId]);
    expect((await waitlistOf(p1!, voucherId)).json.data.me.state).toBe('offered');
    expect(await positionOf(script!, voucherId)).toEqual({ state: 'waiting', position: 3 });
    await assertInvariants(voucherId, { drained: true });
  });
});
