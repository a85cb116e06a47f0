/**
 * SCAN over the whole keyspace. A cluster's keys are spread over its masters and SCAN only walks
 * the node it is sent to, so this walks each master in turn (a single server is its own master).
 */
import { masterNodes } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { slotOf } from '@/lib/redis/slots';

export async function* scanKeys(client: RedisClient, opts: { match?: string; count?: number } = {}): AsyncGenerator<string[]> {
  const match = opts.match ? ['MATCH', opts.match] : [];
  for (const node of masterNodes(client)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, ...(match as ['MATCH', string]), 'COUNT', opts.count ?? 1000);
      cursor = next;
      if (batch.length > 0) yield batch;
    } while (cursor !== '0');
  }
}

/** Every key name matching `match` across all masters (tests and tooling; production code scans in batches). */
export async function allKeys(client: RedisClient, match = '*'): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of scanKeys(client, { match })) out.push(...batch);
  return out;
}

/** Deletes keys that may live in different slots: one DEL per slot group, sent in parallel. */
export async function deleteKeys(client: RedisClient, keys: string[]): Promise<number> {
  const bySlot = new Map<number, string[]>();
  for (const k of keys) {
    const s = slotOf(k);
    const group = bySlot.get(s);
    if (group) group.push(k);
    else bySlot.set(s, [k]);
  }
  const counts = await Promise.all([...bySlot.values()].map((group) => client.del(...group)));
  return counts.reduce((a, b) => a + b, 0);
}
