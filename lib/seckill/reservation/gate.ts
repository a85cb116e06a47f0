/**
 * A gated sale's Redis state, rebuilt from MySQL (docs/fair-sale.md#a-redis-loss). The preheat
 * calls this inside its transaction, before it writes the meta hash: the reserved and winners sets
 * are complete before the meta's `gate` field can admit anyone by them.
 *
 * Each set is written under a side key and renamed over the live one, so a grab sees the old set
 * or the new one, never a half-built one. The gate row is locked FOR UPDATE meanwhile: a
 * reservation or a cancel (FOR SHARE) or the draw (FOR UPDATE) waits, and cannot be lost between
 * the read and the rename.
 */
import type { Executor } from '@/lib/db/client';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { findGate, GateMode, reservedIdPages, type GateRow } from '@/lib/seckill/reservation/reservation.repository';

/** The meta hash's `gate` field: '' none, 'r' reserved users only, 'd' draw pending, 'w' drawn users only. */
export type GateField = '' | 'r' | 'd' | 'w';

export function gateFieldOf(g: GateRow | undefined): GateField {
  if (!g) return '';
  if (g.mode === GateMode.FIRST_COME) return 'r';
  return g.drawnTime ? 'w' : 'd';
}

async function rebuildSet(trx: Executor, redis: RedisClient, voucherId: string, what: 'reserved' | 'winners'): Promise<number> {
  const live = what === 'reserved' ? keys.seckillReserved(voucherId) : keys.seckillWinners(voucherId);
  const side = keys.seckillRebuild(voucherId, what);
  await redis.del(side);
  let n = 0;
  for await (const page of reservedIdPages(trx, voucherId, what === 'winners')) {
    await redis.sadd(side, ...page);
    n += page.length;
  }
  if (n === 0) await redis.del(live);
  else await redis.rename(side, live);
  return n;
}

/** Rebuilds the reserved set (and, once drawn, the winners) from MySQL; returns the gate field to write. */
export async function rebuildGate(trx: Executor, redis: RedisClient, voucherId: string): Promise<GateField> {
  const g = await findGate(trx, voucherId, 'update');
  if (!g) return '';
  await rebuildSet(trx, redis, voucherId, 'reserved');
  if (g.drawnTime) await rebuildSet(trx, redis, voucherId, 'winners');
  return gateFieldOf(g);
}

/** The gate field as MySQL has it now, without rebuilding anything (add-stock keeps the sets). */
export async function currentGateField(trx: Executor, voucherId: string): Promise<GateField> {
  return gateFieldOf(await findGate(trx, voucherId));
}
