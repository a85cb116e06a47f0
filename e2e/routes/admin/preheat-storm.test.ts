/**
 * Preheat / repair, add-stock and lowering the stock while a real grab storm runs against the real
 * grab route and a real worker: afterwards nothing is oversold, nobody holds two orders and every
 * flash-sale invariant (docs/flash-sale.md#invariants) holds once the queue drains.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { callRoute } from '@/e2e/support/helpers';
import { PEER_HEADER } from '@/lib/http/client-ip';
import { POST as createRoute } from '@/app/api/admin/vouchers/route';
import { PATCH as patchRoute } from '@/app/api/admin/vouchers/[id]/route';
import { POST as preheatRoute } from '@/app/api/admin/vouchers/[id]/preheat/route';
import { POST as addStockRoute } from '@/app/api/admin/vouchers/[id]/stock/route';
import { POST as grabRoute } from '@/app/api/seckill/[voucherId]/route';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { assertInvariants } from '@/lib/seckill/invariants';
import { readSeckillState } from '@/lib/seckill/state';
import { dbStockCounts } from '@/lib/seckill/seckill.repository';
import { createTestUsers, waitFor } from '@/e2e/support/fixtures/seckill';
import { createConsoleFixture, seckillBody, type ConsoleFixture } from '@/e2e/support/fixtures/admin';

let f: ConsoleFixture;
const suite = orderWorkerSuite();
const ipBase = Math.floor(Math.random() * 200);

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
  await suite.start();
});
afterAll(suite.end);

describe('admin actions during a grab storm', () => {
  it('600 users × 2 grabs in 20 waves at stock 300 while preheat runs again and again: oversold = 0', async () => {
    const created = await callRoute(createRoute, { token: f.merchantA.token, body: seckillBody(f.shopA, { stock: 300 }) });
    const id = created.json.data.id as string;
    const users = await createTestUsers(db, redis, 600);
    const asMerchant = { token: f.merchantA.token, params: { id } };

    let storming = true;
    let preheats = 0;
    const preheatLoop = (async () => {
      while (storming) {
        expect((await callRoute(preheatRoute, { method: 'POST', ...asMerchant })).status).toBe(200);
        preheats++;
      }
    })();

    const results: { status: number }[] = [];
    const admin: Pick<Awaited<ReturnType<typeof callRoute>>, 'status' | 'json'>[] = [];
    const WAVES = 20;
    const perWave = users.length / WAVES;
    for (let w = 0; w < WAVES; w++) {
      const wave = users.slice(w * perWave, (w + 1) * perWave).flatMap((u, j) => {
        const i = w * perWave + j;
        const headers = { [PEER_HEADER]: `10.${ipBase}.${i >> 8}.${i & 255}` };
        return [0, 1].map(() => callRoute(grabRoute, { method: 'POST', token: u.token, params: { voucherId: id }, headers }));
      });
      // Mid-storm, each racing a wave of grabs and the preheats: add 20, then take 10 unsold away.
      const action =
        w === 2 ? callRoute(addStockRoute, { ...asMerchant, body: { amount: 20 } })
        : w === 4 ? callRoute(patchRoute, { method: 'PATCH', ...asMerchant, body: { stock: 310 } })
        : null;
      results.push(...(await Promise.all(wave)));
      if (action) admin.push(await action);
    }
    storming = false;
    await preheatLoop;
    for (const r of admin) expect(r.status, JSON.stringify(r.json)).toBe(200);
    // The preheats really overlapped the storm (grabs no longer wait for the broker's confirm, so
    // the 20 waves take only a few preheats' time).
    expect(preheats).toBeGreaterThan(1);

    const accepted = results.filter((r) => r.status === 200).length;
    expect((await readSeckillState(redis, id))!.initial).toBe(310);
    expect(accepted).toBe(310); // 1200 grabs by 600 users: everything on sale is sold, no more
    expect(results.every((r) => [200, 409, 410].includes(r.status))).toBe(true);

    await waitFor('drain', async () => (await dbStockCounts(db, id))?.orders === accepted && (await readSeckillState(redis, id))?.pending === 0, 30_000);
    const report = await assertInvariants(id, { drained: true });
    expect(report.oversold).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report).toMatchObject({ dbInitial: 310, dbOrders: 310, dbStock: 0, buyers: 310 });
  });
});
