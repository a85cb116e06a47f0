/**
 * Global order ids (RedisIdWorker in the original 黑马点评; docs/security.md#redis-keys): 1 sign bit, 31 bits of seconds since
 * ID_EPOCH_SECONDS, 32 bits of a per-day Redis sequence. Unique across processes because the
 * sequence is one Redis counter per day, increasing because the seconds come from Redis' clock in
 * the same script that increments it. The value needs 63 bits, so it is built with BigInt and
 * travels as a decimal string (JSON numbers lose precision above 2^53).
 */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

/** 2025-01-01T00:00:00Z. 31 bits of seconds last until 2093. */
export const ID_EPOCH_SECONDS = 1_735_689_600;
const SEQUENCE_BITS = 32n;
const MAX_SEQUENCE = (1n << SEQUENCE_BITS) - 1n;
const DAY_SECONDS = 86_400;

export function dayKey(day: number): string {
  return new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10).replaceAll('-', '');
}

export function composeId(unixSeconds: number, sequence: number): bigint {
  const offset = BigInt(unixSeconds - ID_EPOCH_SECONDS);
  const seq = BigInt(sequence);
  if (offset < 0n || offset >= 1n << 31n) throw new Error(`order id clock out of range: ${unixSeconds}`);
  if (seq < 1n || seq > MAX_SEQUENCE) throw new Error(`order id sequence exhausted for the day: ${sequence}`);
  return (offset << SEQUENCE_BITS) | seq;
}

/** The creation time encoded in an id (second precision). */
export function idTime(id: string): Date {
  return new Date((Number(BigInt(id) >> SEQUENCE_BITS) + ID_EPOCH_SECONDS) * 1000);
}

export async function nextOrderId(redis: RedisClient): Promise<string> {
  let day = Math.floor(Date.now() / 1000 / DAY_SECONDS);
  // At most one retry: the script tells us Redis' day when our clock disagrees around midnight.
  for (let i = 0; i < 3; i++) {
    const [a, b] = await runScript<[number, number]>(redis, 'seckill-order-id', [keys.orderSeq(dayKey(day))], [day]);
    if (a >= 0) return composeId(a, b).toString();
    day = b;
  }
  throw new Error('order id: could not agree on the day with Redis');
}
