/**
 * What the gate costs the grab (docs/fair-sale.md#the-gate-in-the-grab), seen by Redis MONITOR
 * (commands a Lua script runs show up with source "lua"): an ungated sale's grab reads no
 * reservation key at all and still makes one round trip in the voucher's slot; a gated sale's
 * accepted grab also makes one, with one set lookup inside; and a sold-out gated sale's refusals
 * are remembered by the process and answered without Redis, like any sale's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { POST as reserveRoute } from '@/app/api/seckill/[voucherId]/reservation/route';
import { GET as lookRoute, POST as joinRoute } from '@/app/api/seckill/[voucherId]/room/route';
import { orderWorkerSuite, routeTestWorker } from '@/e2e/support/fixtures/order-worker';
import { openRefusalMemory, type RefusalMemoryHandle } from '@/lib/seckill/refusal-memory';
import { createTestUsers, createTestVoucher, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { readSeckillState } from '@/lib/seckill/state';
import { createGatedVoucher, startSaleNow } from '@/e2e/support/fixtures/reservation';
import { issueGrabToken } from '@/lib/seckill/room/tokens';
import { scriptCalls, seen, type Seen } from '@/e2e/support/slot-trips';
import { loadScripts } from '@/lib/redis/scripts';
import { keys } from '@/lib/redis/keys';
import { createRoomVoucher, solvedPayload } from '@/e2e/support/fixtures/room';

const suite = orderWorkerSuite({ options: { ...routeTestWorker, sweepIntervalMs: 3_600_000 } });
let handle: RefusalMemoryHandle;

beforeAll(async () => {
  await suite.start();
  handle = openRefusalMemory(redis, 60_000);
  await waitFor('the refusal memory subscribed', async () => handle.memory.isTrusted);
});

afterAll(suite.end);

let ip = 0;
const grab = (u: TestUser, voucherId: string) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.78.${(++ip >> 8) & 255}.${ip & 255}` } });
const touchesGateSets = (c: string[]) => c.some((a) => /:(reserved|winners)$/.test(a));

describe('the gate in the grab', () => {
  it('an ungated sale: one round trip, no reservation key read inside it', async () => {
    const voucherId = await createTestVoucher(db, redis, { stock: 5 });
    const [u] = await createTestUsers(db, redis, 1);
    const s = await seen(voucherId, async () => expect((await grab(u!, voucherId)).status).toBe(200));
    expect(scriptCalls(s)).toHaveLength(1);
    expect(s.inside.filter(touchesGateSets)).toEqual([]);
    expect(s.inside.filter((c) => c.some((a) => a.endsWith(':spent')))).toEqual([]);
    expect(s.inside.some((c) => /^hmget$/i.test(c[0]!) && c.includes('gate'))).toBe(true);
  });

  it('a gated sale: an accepted grab is still one round trip, with one SISMEMBER on the reserved set inside', async () => {
    const voucherId = await createGatedVoucher(db, redis, { stock: 5, mode: 'first-come' });
    const [u] = await createTestUsers(db, redis, 1);
    expect((await callRoute(reserveRoute, { method: 'POST', token: u!.token, params: { voucherId } })).status).toBe(200);
    await startSaleNow(db, redis, voucherId);
    const s = await seen(voucherId, async () => expect((await grab(u!, voucherId)).status).toBe(200));
    expect(scriptCalls(s)).toHaveLength(1);
    expect(s.inside.filter(touchesGateSets).map((c) => c[0]!.toLowerCase())).toEqual(['sismember']);
  });

  it('a sold-out gated sale: refused from the process memory, nothing sent to Redis', async () => {
    const voucherId = await createGatedVoucher(db, redis, { stock: 1, mode: 'first-come' });
    const [buyer, stranger, other] = await createTestUsers(db, redis, 3);
    await callRoute(reserveRoute, { method: 'POST', token: buyer!.token, params: { voucherId } });
    await startSaleNow(db, redis, voucherId);
    expect((await grab(buyer!, voucherId)).status).toBe(200);
    expect((await grab(stranger!, voucherId)).json.error.code).toBe('SOLD_OUT'); // the script's answer, remembered
    expect(handle.memory.lookup(voucherId)).toBe('SOLD_OUT');
    await waitFor('the order written', async () => (await readSeckillState(redis, voucherId))?.pending === 0);
    const s = await seen(voucherId, async () => {
      for (let i = 0; i < 5; i++) expect((await grab(other!, voucherId)).json.error.code).toBe('SOLD_OUT');
    });
    expect(s.trips).toEqual([]);
  });
});

// docs/fair-sale.md#sold-out: after the last unit, the crowd costs the box nothing.
describe('a sold-out room sale', () => {
  it('a join, a look and a grab are answered 已抢光 before the session is read: no session, a forged one or a real one, nothing sent to Redis at all', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 1 });
    const [buyer, late] = await createTestUsers(db, redis, 2);
    const { token } = issueGrabToken(voucherId, buyer!.userId, 60_000);
    expect((await callRoute(grabRoute, { method: 'POST', token: buyer!.token, params: { voucherId }, query: { g: token } })).status).toBe(200);
    // The first look after the last unit asks Redis (stock 0) and teaches the process.
    expect((await callRoute(joinRoute, { method: 'POST', token: late!.token, params: { voucherId } })).json.data.state).toBe('soldout');
    await waitFor('the order written', async () => (await readSeckillState(redis, voucherId))?.pending === 0);
    const callers = [{}, { headers: { authorization: 'Bearer forged-session' } }, { token: late!.token }];
    const s = await seen(voucherId, async () => {
      for (const who of callers) {
        const joined = await callRoute(joinRoute, { method: 'POST', params: { voucherId }, ...who });
        expect([joined.status, joined.json.data]).toMatchObject([200, { state: 'soldout', position: null, ticket: null }]);
        expect((await callRoute(lookRoute, { method: 'GET', params: { voucherId }, query: { wait: '5000' }, ...who })).json.data.state).toBe('soldout');
        const grabbed = await callRoute(grabRoute, { method: 'POST', params: { voucherId }, ...who });
        expect([grabbed.status, grabbed.json.error.code]).toEqual([410, 'SOLD_OUT']);
      }
    });
    expect(s.all).toEqual([]);
    // A sale still on: no session is still 401, and the session is read (the answer depends on who asks).
    const open = await createRoomVoucher(db, redis, { stock: 5 });
    const o = await seen(open, async () => {
      expect((await callRoute(joinRoute, { method: 'POST', params: { voucherId: open } })).status).toBe(401);
      expect((await callRoute(grabRoute, { method: 'POST', params: { voucherId: open } })).status).toBe(401);
      expect((await callRoute(joinRoute, { method: 'POST', token: late!.token, params: { voucherId: open } })).json.data.position).toBe(1);
    });
    expect(o.all.length).toBeGreaterThan(0);
  });
});

// docs/fair-sale.md#the-grab-token: the room's token check in the grab.
describe('the token in the grab of a room sale', () => {
  const grabWith = (u: TestUser, voucherId: string, g: string) => callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, query: { g } });

  it('a grab with no token or a bad one is refused without Redis (after the first token-less one taught the process)', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 5 });
    const [u, v] = await createTestUsers(db, redis, 2);
    expect((await grab(u!, voucherId)).json.error.code).toBe('NEED_TICKET'); // the script's NO_TOKEN, remembered
    const s = await seen(voucherId, async () => {
      for (let i = 0; i < 3; i++) expect((await grab(u!, voucherId)).json.error.code).toBe('NEED_TICKET');
      expect((await grabWith(u!, voucherId, issueGrabToken(voucherId, v!.userId, 60_000).token)).json.error.code).toBe('NEED_TICKET');
      expect((await grabWith(u!, voucherId, `g2.${voucherId}.${u!.userId}..AAAAAAAAAAAAAAAA.9999999999999.forged`)).json.error.code).toBe('NEED_TICKET');
    });
    expect(s.trips).toEqual([]);
  });

  it('an accepted grab with a token is one round trip, the nonce spent inside it with one SADD', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 5 });
    const [u] = await createTestUsers(db, redis, 1);
    const { token } = issueGrabToken(voucherId, u!.userId, 60_000);
    const s = await seen(voucherId, async () => expect((await grabWith(u!, voucherId, token)).status).toBe(200));
    expect(scriptCalls(s)).toHaveLength(1);
    expect(s.inside.filter((c) => c.some((a) => a.endsWith(':spent'))).map((c) => c[0]!.toLowerCase())).toEqual(['sadd', 'pexpireat']);
  });
});

// docs/fair-sale.md#buying-on-admission: what a buyer of a room sale costs Redis, request by request.
describe('a room buyer admitted at once', () => {
  const byName = new Map([...loadScripts().values()].flatMap((d) => [[d.sha1, d.name] as const, [d.lua, d.name] as const]));
  const scriptNames = (s: Seen) => scriptCalls(s).map((c) => byName.get(c[1]!) ?? c[1]);

  it('asking to buy is one round trip in the slot (the look keeps the turn and reads the gate); buying with the solution two (the look spends it, then the grab)', async () => {
    const voucherId = await createRoomVoucher(db, redis, { stock: 5 });
    const [first, u] = await createTestUsers(db, redis, 2);
    // Another visitor first, so the sale's state is not this buyer's to make (the bucket count, which
    // decides whether turns are kept, is known since the fixture's preheat).
    expect((await callRoute(joinRoute, { method: 'POST', token: first!.token, params: { voucherId } })).status).toBe(200);
    let asked: Awaited<ReturnType<typeof callRoute>> | undefined;
    const ask = await seen(voucherId, async () => (asked = await callRoute(joinRoute, { method: 'POST', token: u!.token, params: { voucherId }, body: { buy: true } })));
    expect(asked!.json.data).toMatchObject({ state: 'admitted' });
    expect(asked!.json.data.challenge).toBeDefined();
    expect(ask.trips.map((c) => c[0]!.toLowerCase())).toEqual(['evalsha']);
    expect(scriptNames(ask)).toEqual(['seckill-room-look']);
    // Inside it: the turn kept as admitted (its moment runs: a time ahead, where a waiting place gets a negative one), the passed set read.
    expect(ask.inside.some((c) => /^zadd$/i.test(c[0]!) && c[1] === keys.turnDue(voucherId))).toBe(true);
    expect(ask.inside.some((c) => /^hset$/i.test(c[0]!) && c[1] === keys.turn(voucherId) && c[2] === String(asked!.json.data.position) && Number(c[3]) > Date.now() - 60_000)).toBe(true);
    expect(ask.inside.some((c) => /^sismember$/i.test(c[0]!) && c[1] === keys.roomPassed(voucherId))).toBe(true);
    const altcha = await solvedPayload(asked!.json.data.challenge);
    let bought: Awaited<ReturnType<typeof callRoute>> | undefined;
    const buy = await seen(voucherId, async () => (bought = await callRoute(joinRoute, { method: 'POST', token: u!.token, params: { voucherId }, body: { altcha, buy: true } })));
    expect(bought!.json.data.purchase).toMatchObject({ status: 'pending' });
    // The solution spent inside the look (its one-time mark, the passed set); the grab's nonce needs no epoch read.
    expect(scriptNames(buy)).toEqual(['seckill-room-look', 'seckill-grab']);
    expect(buy.inside.some((c) => /^set$/i.test(c[0]!) && c[1]!.startsWith(`seckill:{${voucherId}}:room:pow:`))).toBe(true);
    expect(buy.inside.some((c) => /^sadd$/i.test(c[0]!) && c[1] === keys.roomPassed(voucherId))).toBe(true);
    expect(buy.inside.filter((c) => c.some((a) => a.endsWith(':spent')))).toEqual([]);
    // Nothing else in the slot but the order's own bookkeeping after its confirm.
    expect(buy.trips.filter((c) => !/^eval(sha)?$/i.test(c[0]!) && !c.includes(keys.seckillPending(voucherId)))).toEqual([]);
  });
});
