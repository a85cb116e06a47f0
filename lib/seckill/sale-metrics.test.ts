/**
 * Per-sale grab counts (lib/seckill/sale-metrics.ts) over a long-running process: the table holds
 * MAX_SALES sales, and a new sale that finds it full takes the slot of one that is over (its grabs
 * answered ENDED, or none for IDLE_MS), whose series leave /metrics. A sale still being grabbed
 * keeps its slot and its count. Before, the first MAX_SALES sales kept their slots for good and
 * every later sale went uncounted. The ended sales are real ones, grabbed through grabVoucher.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { register } from 'prom-client';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { grabVoucher } from '@/lib/seckill/grab';
import { countSaleChallenge, countSaleGrab, IDLE_MS, localSaleGrabs, MAX_SALES } from '@/lib/seckill/sale-metrics';
import { createTestUsers, createTestVoucher } from '@/e2e/support/fixtures/seckill';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

beforeEach(() => register.getSingleMetric('hmdp_sale_grabs_total')!.reset());

/** The vouchers /metrics shows grab counts for. */
async function exported(): Promise<Set<string>> {
  const text = await register.getSingleMetricAsString('hmdp_sale_grabs_total');
  return new Set([...text.matchAll(/voucher="([^"]+)"/g)].map((m) => m[1]!));
}

/** A real grab's refusal code (the grab is expected to be refused). */
async function refusedGrab(voucherId: string, userId: string): Promise<string> {
  try {
    await grabVoucher(db, redis, { voucherId, userId, ip: '203.0.113.9' });
    return 'accepted';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

describe('per-sale grab counts in a long-running process', () => {
  it('a full table of sales gone quiet gives its slots to a new sale, and their series leave /metrics', async () => {
    const now = Date.now();
    const quiet = now - IDLE_MS - 1000;
    for (let i = 0; i < MAX_SALES; i++) countSaleGrab(`9000${i}`, 'accepted', false, quiet);
    expect((await exported()).size).toBe(MAX_SALES);

    countSaleGrab('8001', 'accepted', false, now);
    countSaleGrab('8001', 'refused', false, now);
    expect(localSaleGrabs('8001')).toMatchObject({ accepted: 1, refused: 1 });
    const shown = await exported();
    expect(shown.has('8001')).toBe(true);
    expect(shown.has('90000')).toBe(false);
    expect(shown.size).toBeLessThanOrEqual(MAX_SALES);
  });

  it('sales whose grabs were answered ENDED give their slots at once (real grabs)', async () => {
    const [u] = await createTestUsers(db, redis, 1);
    const ended = await createTestVoucher(db, redis, { stock: 5, startsInMs: -7_200_000, endsInMs: -1000 });
    const upcoming = await createTestVoucher(db, redis, { stock: 5, startsInMs: 3_600_000, endsInMs: 7_200_000 });
    expect(await refusedGrab(ended, u!.userId)).toBe('ENDED');
    expect(localSaleGrabs(ended)).toMatchObject({ accepted: 0, refused: 1 });
    // The rest of the table: sales that ended a moment ago (grabbed just now, so not idle).
    for (let i = 1; i < MAX_SALES; i++) countSaleGrab(`9100${i}`, 'refused', true);
    expect((await exported()).size).toBe(MAX_SALES);

    expect(await refusedGrab(upcoming, u!.userId)).toBe('NOT_STARTED');
    expect(localSaleGrabs(upcoming)).toMatchObject({ accepted: 0, refused: 1 });
    const shown = await exported();
    expect(shown.has(upcoming)).toBe(true);
    expect(shown.has(ended)).toBe(false);
    expect(localSaleGrabs(ended)).toMatchObject({ accepted: 0, refused: 0 });
  });

  it('a sale still being grabbed is never dropped; a table full of live sales refuses a newcomer (bounded)', async () => {
    let now = Date.now();
    const live = '7001';
    // One live sale among MAX_SALES - 1 that went quiet long ago.
    for (let i = 1; i < MAX_SALES; i++) countSaleGrab(`9200${i}`, 'refused', false, now - 2 * IDLE_MS);
    let liveGrabs = 0;
    const grabLive = () => {
      countSaleGrab(live, 'accepted', false, now);
      liveGrabs++;
    };
    grabLive();
    // Three tables' worth of new sales arrive, one a second while the live sale is grabbed each
    // second: the quiet ones go, then the table is full of live sales and newcomers are refused.
    for (let i = 0; i < 3 * MAX_SALES; i++) {
      now += 1000;
      grabLive();
      countSaleGrab(`9300${i}`, 'refused', false, now);
      expect(localSaleGrabs(live).accepted).toBe(liveGrabs);
    }
    const shown = await exported();
    expect(shown.size).toBe(MAX_SALES);
    expect(shown.has(live)).toBe(true);
    expect(shown.has('92001')).toBe(false);
    expect(localSaleGrabs('9300998')).toMatchObject({ accepted: 0, refused: 1 }); // filled the last free slot
    expect(localSaleGrabs('9300999')).toMatchObject({ accepted: 0, refused: 0 }); // every slot live: not counted
    // Those live sales go quiet (the first one is grabbed on): IDLE_MS later a newcomer is counted again.
    now += IDLE_MS;
    countSaleGrab('93000', 'refused', false, now);
    grabLive();
    countSaleGrab('7002', 'accepted', false, now + 1);
    expect(localSaleGrabs('7002')).toMatchObject({ accepted: 1, refused: 0 });
    expect(localSaleGrabs('93000')).toMatchObject({ accepted: 0, refused: 2 });
    expect(localSaleGrabs(live).accepted).toBe(liveGrabs);
  });

  it('proofs of work per sale: a sale a look found is counted; an id nobody found takes no slot', async () => {
    const now = Date.now();
    countSaleChallenge('7101', false, false, now); // a waitlist join's proof for an id never seen
    expect(localSaleGrabs('7101')).toMatchObject({ solved: 0, failed: 0 });
    countSaleChallenge('7101', true, true, now); // the room's look found it
    countSaleChallenge('7101', false, false, now); // now known here: the waitlist's count too
    expect(localSaleGrabs('7101')).toEqual({ accepted: 0, refused: 0, solved: 1, failed: 1 });
    const text = await register.getSingleMetricAsString('hmdp_sale_challenges_total');
    expect(text).toContain('hmdp_sale_challenges_total{voucher="7101",outcome="solved"} 1');
    expect(text).toContain('hmdp_sale_challenges_total{voucher="7101",outcome="failed"} 1');
    // Sales without a proof checked have no challenge series.
    countSaleGrab('7102', 'accepted', false, now);
    expect(await register.getSingleMetricAsString('hmdp_sale_challenges_total')).not.toContain('voucher="7102"');
  });
});
