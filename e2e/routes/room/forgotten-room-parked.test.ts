/**
 * A parked look after Redis forgot the room (all seckill:{vid}:* keys gone), with
 * ROOM_HOLD_MS=0. docs/fair-sale.md#waiting-without-polling promises "a room Redis forgot ... answers
 * every parked look `none` ..., never a stale admission". The watcher used to detect the loss only
 * by `issued` going down between two ticks: when the room was re-joined by as many people as before
 * within one tick (≤ 200 ms), the parked look of a visitor who never re-joined was answered
 * `admitted` at their OLD place, which the new room does not hold for them (every attempt here). Now the
 * places the counter reached are read back from Redis before they are answered.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

const saved = vi.hoisted(() => {
  const s = { rate: process.env.ROOM_ADMIT_PER_SECOND, hold: process.env.ROOM_HOLD_MS };
  process.env.ROOM_ADMIT_PER_SECOND = '2';
  process.env.ROOM_HOLD_MS = '0';
  return s;
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { createTestUsers, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { forgetSaleKeys } from '@/e2e/support/fixtures/reservation';
import { callJoin, callLook, callToken, createRoomVoucher } from '@/e2e/support/fixtures/room';
import { keys } from '@/lib/redis/keys';

afterAll(async () => {
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
  for (const [k, v] of [['ROOM_ADMIT_PER_SECOND', saved.rate], ['ROOM_HOLD_MS', saved.hold]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('a parked look when Redis forgot the room (ROOM_HOLD_MS=0)', () => {
  it('is never answered admitted at a place the new room does not hold for the visitor', async () => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const voucherId = await createRoomVoucher(db, redis, { stock: 100 });
      const users = await createTestUsers(db, redis, 24);
      const first = users.slice(0, 12);
      const others = users.slice(12);
      // Twelve places; at 2 a second the 12th waits seconds.
      for (const u of first) await callJoin(u, voucherId);
      const x = first[11]!;
      const before = await callLook(x, voucherId);
      expect(before.json.data).toMatchObject({ state: 'waiting', position: 12 });
      const ticket = before.json.data.ticket as string;
      const parked = callLook(x, voucherId, { wait: 8000 });
      await new Promise((r) => setTimeout(r, 250));
      // Redis forgets the sale (a restart without persistence), and twelve others re-join at once.
      await forgetSaleKeys(redis, voucherId);
      await Promise.all(others.map((u) => callJoin(u, voucherId)));
      const heard = await parked;
      // What Redis says about X now: no place at all.
      expect(await redis.zscore(keys.roomQueue(voucherId), x.userId)).toBeNull();
      const now = (await callLook(x, voucherId)).json.data.state;
      const t = await callToken(x, voucherId, { ticket });
      outcomes.push(`parked=${heard.json.data?.state}@${heard.json.data?.position} lookNow=${now} token=${t.status}:${t.json?.error?.code ?? t.json?.code ?? ''}`);
    }
    // Every parked look of the forgotten visitor must hear `none` (join again), never `admitted`.
    for (const o of outcomes) expect(o).toMatch(/^parked=none/);
  }, 60_000);
});
