/**
 * The waiting room's per-sale gauges (lib/seckill/room/metrics.ts) over a long-running process:
 * at most MAX_SALES sales; a new sale that finds them all taken frees the slots of sales past their
 * end or not looked at for IDLE_MS, and their series leave the registry. A live sale looked at
 * lately is never dropped. Before, the first MAX_SALES room sales kept their slots for good.
 */
import { describe, expect, it } from 'vitest';
import { register } from 'prom-client';
import { IDLE_MS, MAX_SALES, roomMetrics } from '@/lib/seckill/room/metrics';

/** voucher → the value /metrics shows for hmdp_room_waiting. */
async function waiting(): Promise<Map<string, number>> {
  const text = await register.getSingleMetricAsString('hmdp_room_waiting');
  return new Map([...text.matchAll(/voucher="([^"]+)"\} (\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

describe('room gauges in a long-running process', () => {
  it('sales past their end or gone quiet give their slots to a new sale; a live one keeps its series', async () => {
    let now = Date.now();
    const live = '61';
    roomMetrics.observe(live, 10, 3, now + 3_600_000, now);
    for (let i = 1; i < MAX_SALES; i++) {
      // Half ended a moment ago (looked at just now), half still on but not looked at for over IDLE_MS.
      if (i % 2) roomMetrics.observe(`620${i}`, 5, 5, now - 1, now);
      else roomMetrics.observe(`630${i}`, 5, 5, now + 86_400_000, now - IDLE_MS - 1);
    }
    expect((await waiting()).size).toBe(MAX_SALES);

    now += 1000;
    roomMetrics.observe('64', 7, 2, now + 3_600_000, now);
    const shown = await waiting();
    expect(shown.get('64')).toBe(5);
    expect(shown.get(live)).toBe(7);
    expect(shown.has('6201')).toBe(false);
    expect(shown.has('6302')).toBe(false);
    expect((await register.getSingleMetricAsString('hmdp_room_served')).includes('voucher="6201"')).toBe(false);

    // A table full of live sales looked at lately: a newcomer is not shown (bounded), nobody live dropped.
    for (let i = 0; i < MAX_SALES; i++) roomMetrics.observe(`650${i}`, 1, 0, now + 3_600_000, now);
    roomMetrics.observe(live, 12, 4, now + 3_600_000, now);
    const full = await waiting();
    expect(full.size).toBe(MAX_SALES);
    expect(full.get(live)).toBe(8);
    expect(full.get('64')).toBe(5);
    expect(full.has(`650${MAX_SALES - 1}`)).toBe(false);
  });
});
