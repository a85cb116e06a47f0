/**
 * Payment-timeout messages are grouped (lib/order/timeout-schedule.ts): the orders of a persisted
 * batch whose deadlines fall together travel as one v2 message that expires at the latest of their
 * deadlines; a lone order is still a v1 message. Real RabbitMQ: the messages are read back from a
 * delay queue of this test's own (an hour's TTL, so nothing expires meanwhile).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Channel } from 'amqplib';
import { closeMq, getConnection } from '@/lib/mq/connection';
import { assertTimeoutTopology, names } from '@/lib/mq/topology';
import { getPublishChannel } from '@/lib/mq/connection';
import { scheduleOrderTimeouts, timeoutOrderIds } from '@/lib/order/timeout-schedule';

const WINDOW_S = 3599;
let ch: Channel | undefined;

afterAll(async () => {
  await ch?.deleteQueue(names.timeoutDelayQueue(WINDOW_S * 1000)).catch(() => undefined);
  await closeMq();
});

describe('payment-timeout messages', () => {
  it('parses v1 and v2, refuses anything else', () => {
    expect(timeoutOrderIds(Buffer.from('{"v":1,"orderId":"12"}'))).toEqual(['12']);
    expect(timeoutOrderIds(Buffer.from('{"v":2,"orderIds":["12","13"]}'))).toEqual(['12', '13']);
    for (const bad of ['{"v":2,"orderIds":[]}', '{"v":2,"orderIds":["x"]}', '{"v":3,"orderId":"1"}', 'nope']) {
      expect(() => timeoutOrderIds(Buffer.from(bad))).toThrow();
    }
  });

  it('orders due together share one v2 message expiring at the latest deadline; a lone order stays v1', async () => {
    ch = await (await getConnection()).createChannel();
    await assertTimeoutTopology(ch, WINDOW_S * 1000);
    await ch.purgeQueue(names.timeoutDelayQueue(WINDOW_S * 1000));
    // Three orders within one 100 ms bucket, accepted a second ago (a deadline in the future by more
    // than the window would be capped at the window).
    const at = Math.floor((Date.now() - 1000) / 100) * 100 + 10;
    const orders = [
      { orderId: '9000000000000001', at },
      { orderId: '9000000000000002', at: at + 30 },
      { orderId: '9000000000000003', at: at + 50 },
      { orderId: '9000000000000004', at: at + 5000 },
    ];
    const pub = await getPublishChannel();
    await scheduleOrderTimeouts(pub, orders, WINDOW_S);
    const after = Date.now();

    const got: { ids: string[]; v: number; expiration: number }[] = [];
    for (let m = await ch.get(names.timeoutDelayQueue(WINDOW_S * 1000)); m; m = await ch.get(names.timeoutDelayQueue(WINDOW_S * 1000))) {
      const body = JSON.parse(m.content.toString()) as { v: number };
      got.push({ ids: timeoutOrderIds(m.content), v: body.v, expiration: Number(m.properties.expiration) });
      ch.ack(m);
    }
    got.sort((a, b) => a.ids.length - b.ids.length);
    expect(got.map((g) => [g.v, g.ids])).toEqual([
      [1, ['9000000000000004']],
      [2, ['9000000000000001', '9000000000000002', '9000000000000003']],
    ]);
    // The group expires at its latest order's deadline (at + 50 + window), not its earliest (50 ms sooner).
    const group = got[1]!;
    expect(group.expiration).toBeGreaterThanOrEqual(at + 50 + WINDOW_S * 1000 - after);
    expect(group.expiration).toBeLessThanOrEqual(WINDOW_S * 1000);
  });
});
