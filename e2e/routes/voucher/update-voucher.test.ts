/**
 * Editing a live sale through the API, with real grabs and a real worker: stock never below what
 * is sold (Redis and MySQL agree after every change), window edits and take-downs reach the grab
 * script, add-stock works mid-sale, and each action leaves an audit row with before → after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { PATCH as patchRoute } from '@/app/api/admin/vouchers/[id]/route';
import { POST as stockRoute, GET as liveRoute } from '@/app/api/admin/vouchers/[id]/stock/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { createTestUsers, waitFor, type TestUser } from '@/e2e/support/fixtures/seckill';
import { listAudit } from '@/lib/audit/audit';
import { homeBucket } from '@/lib/seckill/buckets/tags';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

let f: ConsoleFixture;
const suite = orderWorkerSuite();
let users: TestUser[];
const ipBase = Math.floor(Math.random() * 200);

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  await suite.start();
  users = await createTestUsers(db, redis, 40);
});
afterAll(suite.end);

async function create(over: Record<string, unknown> = {}): Promise<string> {
  const r = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, over) });
  expect(r.status).toBe(201);
  return r.json.data.id;
}
const grab = (u: TestUser, voucherId: string, i: number) =>
  callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId }, headers: { [PEER_HEADER]: `10.${ipBase}.9.${i}` } });
const patch = (id: string, body: unknown, token = f.merchantA.token) => callRoute(patchRoute, { method: 'PATCH', token, params: { id }, body });
const drained = (id: string) =>
  waitFor('drained', async () => {
    const r = await callRoute(liveRoute, { token: f.merchantA.token, params: { id } });
    return r.json.data.consistency.status === 'consistent' ? r.json.data : null;
  });

describe('edit a live sale', () => {
  it('stock can go down to what is sold, not below; Redis and MySQL move together', async () => {
    const id = await create({ stock: 10 });
    const results = await Promise.all(users.slice(0, 6).map((u, i) => grab(u, id, i)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    await drained(id);

    const below = await patch(id, { stock: 5 });
    expect(below.status).toBe(400);
    expect(below.json.error.fields.stock).toContain('6');
    expect((await readSeckillState(redis, id))?.initial).toBe(10);

    const ok = await patch(id, { stock: 6, title: '改过的标题' });
    expect(ok.status).toBe(200);
    expect(ok.json.data.voucher).toMatchObject({ title: '改过的标题', seckill: { initialStock: 6, stock: 0 } });
    expect(await readSeckillState(redis, id)).toMatchObject({ initial: 6, remaining: 0, buyers: 6 });
    await assertInvariants(id, { drained: true });
    expect((await grab(users[10]!, id, 10)).status).toBe(410);

    const [audit] = await listAudit(db, { targetType: 'voucher', targetId: id, limit: 1 });
    expect(audit).toMatchObject({ action: 'voucher.update', actorId: f.merchantA.id, before: { stock: 10 }, after: { stock: 6, title: '改过的标题' } });
  });

  it('price and begin time are locked once the sale is live; unchanged values pass', async () => {
    const id = await create();
    const r = await patch(id, { payValue: 100, beginTime: new Date(Date.now() - 3600_000).toISOString() });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json.error.fields).sort()).toEqual(['beginTime', 'payValue']);
    expect((await patch(id, { payValue: 990, actualValue: 5000, subTitle: 'ok' })).status).toBe(200);
  });

  it('add stock mid-sale: Redis and MySQL together, audited', async () => {
    const id = await create({ stock: 2 });
    await Promise.all(users.slice(11, 13).map((u, i) => grab(u, id, 11 + i)));
    expect((await grab(users[13]!, id, 13)).status).toBe(410);
    const r = await callRoute(stockRoute, { token: f.merchantA.token, params: { id }, body: { amount: 3 } });
    expect(r.status).toBe(200);
    expect(r.json.data.seckill.initialStock).toBe(5);
    expect((await grab(users[13]!, id, 13)).status).toBe(200);
    await drained(id);
    await assertInvariants(id, { drained: true });
    const [audit] = await listAudit(db, { targetType: 'voucher', targetId: id, limit: 1 });
    expect(audit).toMatchObject({ action: 'voucher.add-stock', before: { stock: 2 }, after: { stock: 5, added: 3 } });
    const tooMuch = await callRoute(stockRoute, { token: f.merchantA.token, params: { id }, body: { amount: 1_000_000 } });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.json.error.fields.amount).toContain('1,000,000');
  });

  it('an edit raising the stock with the price, refused because the sale opened during it, raises nothing', async () => {
    const begin = Date.now() + 2500;
    const created = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 10, beginTime: new Date(begin).toISOString() }) });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    // Another writer holds the voucher row a little past the opening, so the sale opens while the
    // edit waits for it (this only widens a window that is there anyway).
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.transaction().execute(async (trx) => {
      await trx.selectFrom('tb_voucher').select('id').where('id', '=', id).forUpdate().execute();
      locked();
      await new Promise((r) => setTimeout(r, Math.max(0, begin - Date.now()) + 300));
    });
    await isLocked;
    expect(Date.now()).toBeLessThan(begin - 500); // checked while upcoming: price and stock may both change
    const r = await patch(id, { stock: 15, payValue: 800 });
    await holder;
    expect(r.status).toBe(400); // re-checked on the locked row: the sale is live, the price locked
    const row = await db.selectFrom('tb_seckill_voucher').select(['initial_stock', 'stock']).where('voucher_id', '=', id).executeTakeFirstOrThrow();
    expect({ initial: Number(row.initial_stock), stock: Number(row.stock) }).toEqual({ initial: 10, stock: 10 });
    expect((await readSeckillState(redis, id))?.initial).toBe(10);
    expect((await listAudit(db, { targetType: 'voucher', targetId: id, limit: 20 })).map((a) => a.action)).not.toContain('voucher.add-stock');
  });

  it('a window edit reaches Redis: moving the end into the near future ends grabs then', async () => {
    const id = await create();
    const end = new Date(Date.now() + 1500);
    const r = await patch(id, { endTime: end.toISOString() });
    expect(r.status).toBe(200);
    expect(r.json.data.redisSynced).toBe(true);
    expect((await readSeckillState(redis, id))?.endTime).toBe(end.toISOString());
    await new Promise((res) => setTimeout(res, 1600));
    const late = await grab(users[20]!, id, 20);
    expect(late.status).toBe(403);
  });

  it('an upcoming sale: moving begin and stock, re-preheated; then it opens', async () => {
    const id = await create({ beginTime: new Date(Date.now() + 3600_000).toISOString(), endTime: new Date(Date.now() + 7200_000).toISOString(), stock: 5 });
    expect((await grab(users[21]!, id, 21)).status).toBe(403);
    const r = await patch(id, { beginTime: new Date(Date.now() - 1000).toISOString(), stock: 3, payValue: 500 });
    expect(r.status).toBe(200);
    expect(await readSeckillState(redis, id)).toMatchObject({ initial: 3, remaining: 3 });
    expect((await grab(users[21]!, id, 21)).status).toBe(200);
  });

  it('take down: grabs stop at once, twice is a no-op, nothing can be edited afterwards', async () => {
    const id = await create();
    const r = await patch(id, { status: 'taken_down' });
    expect(r.status).toBe(200);
    expect(r.json.data.voucher.state).toBe('taken_down');
    expect((await grab(users[22]!, id, 22)).status).toBe(403);
    const again = await patch(id, { status: 'taken_down' });
    expect(again.status).toBe(200);
    const audits = await listAudit(db, { targetType: 'voucher', targetId: id, limit: 10 });
    expect(audits.filter((a) => a.action === 'voucher.take-down')).toHaveLength(1);
    expect((await patch(id, { title: 'x' })).status).toBe(409);
    expect((await patch(id, { status: 'taken_down', title: 'x' })).status).toBe(400);
  });

  it('a 3-bucket sale\'s stock goes down by units from every bucket, even when the first bucket sold out; never below what is sold', async () => {
    const id = await create({ stock: 12, buckets: 3 });
    // Four buyers whose home is bucket 0 empty its share of 4 (no stock move is needed for them).
    const home0 = users.filter((u) => homeBucket(u.userId, 3) === 0).slice(0, 4);
    expect(home0).toHaveLength(4);
    expect((await Promise.all(home0.map((u, i) => grab(u, id, 40 + i)))).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await drained(id);
    expect((await readSeckillState(redis, id))?.buckets?.map((b) => b.remaining)).toEqual([0, 4, 4]);

    // Lowering by 6 needs the other buckets' units (bucket 0 has none unsold).
    const ok = await patch(id, { stock: 6 });
    expect(ok.status).toBe(200);
    const s = await readSeckillState(redis, id);
    expect(s).toMatchObject({ initial: 6, remaining: 2, buyers: 4 });
    expect(s?.buckets?.reduce((a, b) => a + b.initial, 0)).toBe(6);
    expect(ok.json.data.voucher).toMatchObject({ seckill: { initialStock: 6 } });
    await assertInvariants(id, { drained: true });

    // Below what is sold: refused, and nothing was taken from any bucket.
    const below = await patch(id, { stock: 3 });
    expect(below.status).toBe(400);
    expect(below.json.error.fields.stock).toContain('4');
    expect((await readSeckillState(redis, id))?.buckets?.map((b) => b.initial)).toEqual(s?.buckets?.map((b) => b.initial));
    await assertInvariants(id, { drained: true });
  });

  it('a 3-bucket sale lowered while buyers grab: Redis and MySQL agree, never oversold', async () => {
    const id = await create({ stock: 30, buckets: 3 });
    const buyers = users.slice(0, 30);
    const [edit, ...grabs] = await Promise.all([
      new Promise((r) => setTimeout(r, 5)).then(() => patch(id, { stock: 12 })),
      ...buyers.map((u, i) => grab(u, id, 100 + i)),
    ]);
    expect([200, 400]).toContain(edit!.status);
    const accepted = grabs.filter((r) => r.status === 200).length;
    const data = await drained(id);
    const s = await readSeckillState(redis, id);
    expect(s!.buyers).toBe(accepted);
    expect(s!.initial).toBe(edit!.status === 200 ? 12 : 30);
    expect(accepted).toBeLessThanOrEqual(s!.initial);
    expect(data.consistency.status).toBe('consistent');
    await assertInvariants(id, { drained: true });
  });

  it('concurrent stock edits never leave Redis and MySQL apart', async () => {
    const id = await create({ stock: 50 });
    const edits = [20, 45, 30, 60, 25, 40].map((stock) => patch(id, { stock }));
    const statuses = (await Promise.all(edits)).map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    await assertInvariants(id, { drained: true });
  });
});
