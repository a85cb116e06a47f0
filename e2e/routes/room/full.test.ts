/**
 * Every unit spoken for (docs/fair-sale.md#every-unit-spoken-for): with a reserve set, a join after
 * the start gets no ticket once the live tickets reach the stock left plus the reserve; newcomers
 * then hear 名额已满 from memory, a ticket holder who shows their ticket never does; pre-start joins
 * are never refused; lapsed holds open the room again. Real Redis/Lua, the real routes, the real
 * memory.
 */
import { afterAll, expect, it, vi } from 'vitest';
import { register } from 'prom-client';

const HOLD_MS = 3000;
const saved = await vi.hoisted(async () =>
  (await import('@/e2e/support/fixtures/env')).overrideEnv({ ROOM_ADMIT_PER_SECOND: '1000', ROOM_HOLD_MS: '3000', ROOM_RESERVE_PERCENT: '0', ROOM_RESERVE_MIN: '2' }),
);

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { callJoin as join, callLook as look, createRoomVoucher } from '@/e2e/support/fixtures/room';
import { callRoute } from '@/e2e/support/helpers';
import { POST as joinRoute } from '@/app/api/seckill/[voucherId]/room/route';
import { keys } from '@/lib/redis/keys';
import { restoreEnv } from '@/e2e/support/fixtures/env';
import { scriptCalls, seen } from '@/e2e/support/slot-trips';

afterAll(async () => {
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeDb(), closeRedis()]);
  restoreEnv(saved);
});

/** A join that shows `ticket` in x-room-ticket, as the room page does on a reload (with a body: the hot server asks a known answer before reading one). */
const joinShowing = (token: string, voucherId: string, ticket: string) =>
  callRoute(joinRoute, { method: 'POST', token, params: { voucherId }, headers: { 'x-room-ticket': ticket }, body: {} });

/** hmdp_room_full_total by source, as /metrics shows it. */
async function fullCounts(): Promise<{ redis: number; memory: number }> {
  const text = await register.getSingleMetricAsString('hmdp_room_full_total');
  const of = (source: string) => Number(new RegExp(`source="${source}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { redis: of('redis'), memory: of('memory') };
}

it('after the start: tickets up to the stock plus the reserve, then 名额已满 without a place, from memory for newcomers, never for a holder who shows the ticket', async () => {
  const before = await fullCounts();
  const voucherId = await createRoomVoucher(db, redis, { stock: 3 });
  const users = await createTestUsers(db, redis, 9);
  // Stock 3 + reserve 2: five tickets, in join order.
  const tickets: string[] = [];
  for (const [i, u] of users.slice(0, 5).entries()) {
    const r = await join(u, voucherId);
    expect(r.status).toBe(200);
    expect(r.json.data.position).toBe(i + 1);
    tickets.push(r.json.data.ticket);
  }
  const sixth = await join(users[5]!, voucherId);
  expect(sixth.status).toBe(200);
  expect(sixth.json.data).toMatchObject({ state: 'full', position: null, ticket: null });
  expect(await redis.zscore(keys.roomQueue(voucherId), users[5]!.userId)).toBeNull();
  expect(await redis.hget(keys.roomState(voucherId), 'seq')).toBe('5');

  // The next newcomers hear it from memory, before the session is read: a real session, a forged
  // one, none; nothing sent to Redis at all.
  const s = await seen(voucherId, async () => {
    for (const who of [{ token: users[6]!.token }, { headers: { authorization: 'Bearer forged-session' } }, {}]) {
      const r = await callRoute(joinRoute, { method: 'POST', params: { voucherId }, body: { buy: true }, ...who });
      expect([r.status, r.json.data]).toMatchObject([200, { state: 'full', position: null, ticket: null }]);
    }
  });
  expect(s.all).toEqual([]);
  // A holder joining again without their ticket is not told apart from a newcomer by the memory
  // (the page then looks, which the memory never answers); with the ticket shown, the join goes
  // to Redis and gets their own place.
  const bare = await seen(voucherId, async () => expect((await join(users[0]!, voucherId)).json.data).toMatchObject({ state: 'full', position: null }));
  expect(bare.all).toEqual([]);
  expect((await look(users[0]!, voucherId)).json.data.position).toBe(1);
  const shown = await seen(voucherId, async () => {
    const again = await joinShowing(users[0]!.token, voucherId, tickets[0]!);
    expect([again.status, again.json.data.position]).toEqual([200, 1]);
  });
  expect(scriptCalls(shown).length).toBeGreaterThan(0);
  // Another user's ticket shown by a newcomer (well signed: the memory cannot know whose, the
  // session is not read yet): the join goes the whole way, where Redis decides, and it is still full.
  const borrowed = await seen(voucherId, async () => expect((await joinShowing(users[7]!.token, voucherId, tickets[1]!)).json.data).toMatchObject({ state: 'full', position: null }));
  expect(scriptCalls(borrowed).length).toBeGreaterThan(0);
  expect(await redis.zscore(keys.roomQueue(voucherId), users[7]!.userId)).toBeNull();
  // A forged one does not even do that: answered from memory.
  const forged = await seen(voucherId, async () => expect((await joinShowing(users[8]!.token, voucherId, `${tickets[2]!.slice(0, -4)}AAAA`)).json.data).toMatchObject({ state: 'full', position: null }));
  expect(forged.all).toEqual([]);
  // A look never joins and is never answered 名额已满 from memory: a newcomer's look says none.
  expect((await look(users[8]!, voucherId)).json.data).toMatchObject({ state: 'none', position: null });
  // Holders keep their places through all of it.
  for (const [i, u] of users.slice(0, 5).entries()) expect(await redis.zscore(keys.roomQueue(voucherId), u.userId)).toBe(String(i + 1));
  expect(await redis.hget(keys.roomState(voucherId), 'seq')).toBe('5');
  // /metrics counts every 名额已满 by where it came from: the sixth and the borrowed ticket from
  // the script, the three newcomers, the bare holder and the forged ticket from memory.
  const after = await fullCounts();
  expect([after.redis - before.redis, after.memory - before.memory]).toEqual([2, 5]);
});

it('the room opens again by itself once holds lapse with nobody buying: the next join gets the next place', async () => {
  const voucherId = await createRoomVoucher(db, redis, { stock: 3 });
  const users = await createTestUsers(db, redis, 7);
  for (const u of users.slice(0, 5)) expect((await join(u, voucherId)).json.data.state).not.toBe('full');
  expect((await join(users[5]!, voucherId)).json.data.state).toBe('full');
  const refusedAt = Date.now();
  // Three admitted at once hold the three units for HOLD_MS; past it (checkpoints every quarter
  // hold) they count as spent, and the live tickets fall below the stock plus the reserve.
  let reopened: { state: string; position: number | null } | undefined;
  await waitFor(
    'a ticket again',
    async () => {
      await look(users[0]!, voucherId); // a look moves the counter and its checkpoints, as the page's polls do
      const r = await join(users[6]!, voucherId);
      reopened = r.json.data;
      return r.json.data.state !== 'full';
    },
    HOLD_MS * 3,
    200,
  );
  expect(Date.now() - refusedAt).toBeGreaterThanOrEqual(HOLD_MS - 500);
  expect(reopened).toMatchObject({ position: 6 });
});

it('before the start every join gets a ticket, however many; after it the first join finds the room full', async () => {
  const voucherId = await createRoomVoucher(db, redis, { stock: 3, startsInMs: 2500 });
  const users = await createTestUsers(db, redis, 9);
  for (const u of users.slice(0, 8)) {
    const r = await join(u, voucherId);
    expect(r.status).toBe(200);
    expect(r.json.data).toMatchObject({ state: 'waiting', shuffled: false });
  }
  expect(await redis.hget(keys.roomState(voucherId), 'pre')).toBe('8');
  await waitFor('the start', async () => (await look(users[0]!, voucherId)).json.data?.shuffled === true, 10_000, 100);
  const late = await join(users[8]!, voucherId);
  expect(late.json.data).toMatchObject({ state: 'full', position: null });
  // The pre-start tickets keep their shuffled places 1..8.
  const places = (await Promise.all(users.slice(0, 8).map((u) => redis.zscore(keys.roomQueue(voucherId), u.userId)))).map(Number).sort((a, b) => a - b);
  expect(places).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
});

it('a counter that caught up with every ticket: its last move counts once a hold old, so lapsed holds open the room (no checkpoint recorded it)', async () => {
  const voucherId = await createRoomVoucher(db, redis, { stock: 2 });
  const users = await createTestUsers(db, redis, 5);
  // Stock 2 + reserve 2: four tickets.
  for (const u of users.slice(0, 4)) expect((await join(u, voucherId)).json.data.state).not.toBe('full');
  // The state a room reaches when its counter admitted the last ticket within a quarter hold of a
  // checkpoint and nobody joined since: served = seq = 4, the ring's newest checkpoint a hold old
  // says 0, the last move (hl) a hold old says 4. Every holder lapsed, nobody bought.
  const now = Number((await redis.time())[0]) * 1000;
  await redis.hset(keys.roomState(voucherId), {
    served: '4', at: String(now), w0: '0', pw: '0', wl: '0', hi: '1', hat: String(now - HOLD_MS - 2000),
    h0: `${now - HOLD_MS - 2000}:0`, hl: `${now - HOLD_MS - 1000}:4`,
  });
  for (const k of ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7']) await redis.hdel(keys.roomState(voucherId), k);
  const r = await join(users[4]!, voucherId);
  expect(r.json.data).toMatchObject({ position: 5 });
});
