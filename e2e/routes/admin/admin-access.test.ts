/**
 * Role enforcement on every admin route: no session → 401, consumer → 403, a merchant on another
 * merchant's shop / voucher / dead letter → 403 (and nothing changes), the owner and an admin pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import * as vouchers from '@/app/api/admin/vouchers/route';
import * as voucher from '@/app/api/admin/vouchers/[id]/route';
import * as preheat from '@/app/api/admin/vouchers/[id]/preheat/route';
import * as stock from '@/app/api/admin/vouchers/[id]/stock/route';
import * as stream from '@/app/api/admin/vouchers/[id]/stock/stream/route';
import * as deadLetters from '@/app/api/admin/dead-letters/route';
import * as replay from '@/app/api/admin/dead-letters/[id]/replay/route';
import * as discard from '@/app/api/admin/dead-letters/[id]/discard/route';
import * as replayAll from '@/app/api/admin/dead-letters/replay-all/route';
import * as audit from '@/app/api/admin/audit/route';
import { createConsoleFixture, seckillBody, type ConsoleFixture, type ConsoleUser } from '@/e2e/support/fixtures/admin';
import { countRows, insertDeadLetter } from '@/e2e/support/fixtures/admin.repository';

let f: ConsoleFixture;
let voucherA: string;
let deadA: string;

afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  const r = await callRoute(vouchers.POST, { token: f.merchantA.token, body: seckillBody(f.shopA) });
  expect(r.status).toBe(201);
  voucherA = r.json.data.id;
  deadA = await deadLetterFor(voucherA, f.consumer.id);
});

/** A dead letter for an order id that will never exist (far-future id), so a replay harms nothing. */
async function deadLetterFor(voucherId: string, userId: string): Promise<string> {
  const orderId = String(9_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
  const payload = JSON.stringify({ v: 1, orderId, userId, voucherId, at: Date.now() });
  return insertDeadLetter(db, { orderId, voucherId, userId, payload, reason: 'test: retries exhausted', attempts: 5 });
}

type Call = { name: string; handler: Parameters<typeof callRoute>[0]; method: string; params?: () => Record<string, string>; query?: () => Record<string, string>; body?: () => unknown };

/** Every route that acts on merchant A's voucher, shop or dead letter. */
const onA: Call[] = [
  { name: 'GET vouchers?shopId=A', handler: vouchers.GET, method: 'GET', query: () => ({ shopId: f.shopA }) },
  { name: 'POST vouchers (shop A)', handler: vouchers.POST, method: 'POST', body: () => seckillBody(f.shopA) },
  { name: 'GET vouchers/{A}', handler: voucher.GET, method: 'GET', params: () => ({ id: voucherA }) },
  { name: 'PATCH vouchers/{A}', handler: voucher.PATCH, method: 'PATCH', params: () => ({ id: voucherA }), body: () => ({ subTitle: 'changed' }) },
  { name: 'POST vouchers/{A}/preheat', handler: preheat.POST, method: 'POST', params: () => ({ id: voucherA }) },
  { name: 'GET vouchers/{A}/stock', handler: stock.GET, method: 'GET', params: () => ({ id: voucherA }) },
  { name: 'POST vouchers/{A}/stock', handler: stock.POST, method: 'POST', params: () => ({ id: voucherA }), body: () => ({ amount: 1 }) },
  { name: 'GET vouchers/{A}/stock/stream', handler: stream.GET, method: 'GET', params: () => ({ id: voucherA }) },
  { name: 'POST dead-letters/{A}/replay', handler: replay.POST, method: 'POST', params: () => ({ id: deadA }) },
  { name: 'POST dead-letters/{A}/discard', handler: discard.POST, method: 'POST', params: () => ({ id: deadA }) },
];
/** Routes without a target: scoped lists and bulk actions. */
const unscoped: Call[] = [
  { name: 'GET vouchers', handler: vouchers.GET, method: 'GET' },
  { name: 'GET dead-letters', handler: deadLetters.GET, method: 'GET' },
  { name: 'POST dead-letters/replay-all', handler: replayAll.POST, method: 'POST' },
  { name: 'GET audit', handler: audit.GET, method: 'GET' },
];

const call = (c: Call, who?: ConsoleUser) =>
  callRoute(c.handler, { method: c.method, token: who?.token, params: c.params?.(), query: c.query?.(), body: c.body?.() });

describe('admin routes: who may call', () => {
  it.each([...onA, ...unscoped].map((c) => [c.name, c] as const))('%s: no session → 401, consumer → 403', async (_n, c) => {
    const anon = await call(c);
    expect(anon.status).toBe(401);
    expect(anon.json.error.code).toBe('UNAUTHORIZED');
    const consumer = await call(c, f.consumer);
    expect(consumer.status).toBe(403);
  });

  it.each(onA.map((c) => [c.name, c] as const))("%s: the other merchant → 403 and nothing written", async (_n, c) => {
    const [vBefore, aBefore] = [await countRows(db, 'tb_voucher'), await countRows(db, 'tb_audit_log')];
    const r = await call(c, f.merchantB);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
    expect(await countRows(db, 'tb_voucher')).toBe(vBefore);
    expect(await countRows(db, 'tb_audit_log')).toBe(aBefore);
  });

  it('a cookie-less forged role does not help: the session decides (merchant B cannot create in shop A)', async () => {
    const r = await callRoute(vouchers.POST, { token: f.merchantB.token, body: seckillBody(f.shopA) });
    expect(r.status).toBe(403);
  });

  it('the owner and an admin pass on every targeted read', async () => {
    for (const who of [f.merchantA, f.admin]) {
      for (const c of onA.filter((x) => x.method === 'GET' && !x.name.includes('stream'))) {
        const r = await call(c, who);
        expect(r.status, `${c.name} as ${who.role}`).toBe(200);
      }
    }
  });

  it("lists are scoped: merchant B sees none of A's vouchers, dead letters or audit rows; admin sees them", async () => {
    const b = await callRoute(vouchers.GET, { token: f.merchantB.token });
    expect(b.json.data.items.map((v: { id: string }) => v.id)).not.toContain(voucherA);
    const a = await callRoute(vouchers.GET, { token: f.merchantA.token, query: { shopId: f.shopA } });
    expect(a.json.data.items.map((v: { id: string }) => v.id)).toContain(voucherA);
    const adm = await callRoute(vouchers.GET, { token: f.admin.token, query: { shopId: f.shopA } });
    expect(adm.json.data.items.map((v: { id: string }) => v.id)).toContain(voucherA);

    const dlB = await callRoute(deadLetters.GET, { token: f.merchantB.token, query: { status: 'all' } });
    expect(dlB.json.data.items.map((d: { id: string }) => d.id)).not.toContain(deadA);
    const dlA = await callRoute(deadLetters.GET, { token: f.merchantA.token, query: { voucherId: voucherA } });
    expect(dlA.json.data.items.map((d: { id: string }) => d.id)).toContain(deadA);

    const auB = await callRoute(audit.GET, { token: f.merchantB.token, query: { targetType: 'voucher', targetId: voucherA } });
    expect(auB.json.data.items).toEqual([]);
    const auA = await callRoute(audit.GET, { token: f.merchantA.token, query: { targetType: 'voucher', targetId: voucherA } });
    expect(auA.json.data.items.map((x: { action: string }) => x.action)).toContain('voucher.create');
    const auAdmin = await callRoute(audit.GET, { token: f.admin.token, query: { targetType: 'voucher', targetId: voucherA } });
    expect(auAdmin.json.data.items.length).toBe(auA.json.data.items.length);
  });

  it("merchant B's replay-all leaves A's dead letter alone; a missing id is 404", async () => {
    const r = await callRoute(replayAll.POST, { token: f.merchantB.token, method: 'POST' });
    expect(r.status).toBe(200);
    const still = await callRoute(deadLetters.GET, { token: f.merchantA.token, query: { voucherId: voucherA } });
    expect(still.json.data.items.find((d: { id: string }) => d.id === deadA)?.status).toBe('dead');
    expect((await callRoute(voucher.GET, { token: f.admin.token, params: { id: '999999999999' } })).status).toBe(404);
    expect((await callRoute(voucher.GET, { token: f.admin.token, params: { id: 'abc' } })).status).toBe(400);
  });
});
