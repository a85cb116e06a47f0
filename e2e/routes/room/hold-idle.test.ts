/**
 * Holds and an idle room (docs/fair-sale.md#an-admitted-ticket-holds-a-unit): admitted holders who
 * never buy keep their units ROOM_HOLD_MS, not longer. The hold cap credits lapsed holds from the
 * checkpoints of the serving counter; a room whose counter caught up with every ticket (nobody
 * waiting) took none, so its last ticket's admission was never recorded. Holders admitted in quick
 * succession and then idle held their units for the next arrivals' whole hold again: a script with
 * as many accounts as units, admitted and never buying, kept each new honest ticket waiting on
 * units nobody held. Real Redis/Lua, the real routes.
 */
import { afterAll, expect, it, vi } from 'vitest';

const HOLD_MS = 4000;
const saved = vi.hoisted(() => {
  const s = { rate: process.env.ROOM_ADMIT_PER_SECOND, hold: process.env.ROOM_HOLD_MS };
  process.env.ROOM_ADMIT_PER_SECOND = '20';
  process.env.ROOM_HOLD_MS = '4000';
  return s;
});

import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { createTestUsers, waitFor, waitOutShortLivedKeys } from '@/e2e/support/fixtures/seckill';
import { callJoin as join, callLook as look, createRoomVoucher } from '@/e2e/support/fixtures/room';

afterAll(async () => {
  await waitOutShortLivedKeys(redis);
  await Promise.all([closeDb(), closeRedis()]);
  for (const [k, v] of [['ROOM_ADMIT_PER_SECOND', saved.rate], ['ROOM_HOLD_MS', saved.hold]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

it('holders admitted one after another who never buy hold their units ROOM_HOLD_MS, not again for later arrivals', async () => {
  const voucherId = await createRoomVoucher(db, redis, { stock: 3 });
  const [a1, a2, a3, h1, h2, h3, h4] = await createTestUsers(db, redis, 7);
  // The script's three accounts, one unit each: each joins as soon as the one before was admitted
  // (at 20 a second, within a quarter hold: the counter's checkpoint ring samples every HOLD_MS / 4).
  for (const a of [a1!, a2!, a3!]) {
    expect((await join(a, voucherId)).status).toBe(200);
    await waitFor('admitted', async () => (await look(a, voucherId)).json.data.state === 'admitted', 5000, 20);
  }
  const admittedAt = Date.now();
  // They never buy; the room sits idle (nobody waiting, nobody looking) past every hold.
  await new Promise((r) => setTimeout(r, HOLD_MS + 1500));
  // Four people arrive: every unit is free (each hold lapsed over a second ago), so the counter's
  // rate alone decides for the first three, a twentieth of a second a place; the fourth waits for a hold.
  for (const h of [h1!, h2!, h3!, h4!]) expect((await join(h, voucherId)).status).toBe(200);
  const joinedAt = Date.now();
  expect(joinedAt - admittedAt).toBeGreaterThan(HOLD_MS);
  await new Promise((r) => setTimeout(r, 300));
  const second = (await look(h2!, voucherId)).json.data;
  // Before the fix: waiting, allHeld, told to expect another whole hold.
  expect(second).toMatchObject({ state: 'admitted', allHeld: false });
  expect((await look(h1!, voucherId)).json.data.state).toBe('admitted');
  expect((await look(h3!, voucherId)).json.data.state).toBe('admitted');
  // Three units, three new holders within their holds: the cap still admits nobody beyond them.
  expect((await look(h4!, voucherId)).json.data).toMatchObject({ state: 'waiting', ahead: 0, allHeld: true });
  expect(Date.now() - joinedAt).toBeLessThan(HOLD_MS);
});
