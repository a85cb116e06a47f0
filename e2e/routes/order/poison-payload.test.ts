/**
 * A poison message whose body is large in UTF-8 bytes still reaches the admin's dead letters.
 * tb_order_dead_letter.payload is a TEXT (65 535 bytes); the worker kept the first 60 000
 * *characters*, which for Chinese text (3 bytes each) or bytes that are not UTF-8 (each read as
 * U+FFFD, 3 bytes) is up to 180 000 bytes: MariaDB (strict mode) refused the row, and the message
 * reached only the dead-letter queue, which no page shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomInt } from 'node:crypto';
import { db } from '@/lib/db/client';
import { getPublishChannel } from '@/lib/mq/connection';
import { names, ORDER_ROUTING_KEY } from '@/lib/mq/topology';
import { orderWorkerSuite } from '@/e2e/support/fixtures/order-worker';
import { waitFor } from '@/e2e/support/fixtures/seckill';

const suite = orderWorkerSuite({ options: { batchWaitMs: 5, sweepIntervalMs: 0 } });

beforeAll(suite.start);

afterAll(suite.end);

const deadLettered = async () => (await suite.worker.metrics.deadLettered.get()).values.reduce((a, v) => a + v.value, 0);

describe('a large poison message', () => {
  it('is filed in tb_order_dead_letter, cut to what the column holds, whole characters only', async () => {
    const tag = `poison-${randomInt(0, 1e9)}`;
    const bodies = [
      Buffer.from(`${tag}-cjk ${'订单'.repeat(20_000)}`), // 40 000 characters, 120 000 bytes
      Buffer.concat([Buffer.from(`${tag}-bin `), Buffer.alloc(40_000, 0xff)]), // not UTF-8 at all
      // 60 000 bytes would end inside the first 订: the cut must drop it whole.
      Buffer.from(`${tag}-edge ${'a'.repeat(59_999 - Buffer.byteLength(`${tag}-edge `))}${'订'.repeat(10)}`),
    ];
    const before = await deadLettered();
    const ch = await getPublishChannel();
    for (const b of bodies) ch.publish(names.ordersExchange, ORDER_ROUTING_KEY, b, { persistent: true });
    await ch.waitForConfirms();
    await waitFor('all three handled', async () => (await deadLettered()) >= before + 3, 10_000);

    const rows = await db.selectFrom('tb_order_dead_letter').select(['payload', 'reason', 'order_id']).where('payload', 'like', `${tag}%`).execute();
    expect(rows.map((r) => r.payload.slice(0, tag.length + 4)).sort()).toEqual([`${tag}-bin`, `${tag}-cjk`, `${tag}-edg`]);
    for (const r of rows) {
      expect(r.reason).toMatch(/^unparseable/);
      expect(r.order_id).toBeNull();
      expect(Buffer.byteLength(r.payload)).toBeLessThanOrEqual(60_000);
    }
    const edge = rows.find((r) => r.payload.startsWith(`${tag}-edge`))!;
    expect(Buffer.byteLength(edge.payload)).toBe(59_999);
    expect(edge.payload.endsWith('a')).toBe(true);
    const cjk = rows.find((r) => r.payload.startsWith(`${tag}-cjk`))!;
    expect(cjk.payload.length).toBeGreaterThan(19_000); // cut, not emptied
  });
});
