/**
 * Scripts run per Redis Cluster master (INFO commandstats: evalsha + eval calls), so the bench can
 * show how a bucketed voucher's grabs spread over the masters (docs/buckets.md#measured).
 * Empty when the bench's Redis is not a cluster.
 */
import type { Cluster } from 'ioredis';
import type { RedisClient } from '@/lib/redis/types';

export async function scriptCallsPerMaster(redis: RedisClient): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const nodes = (redis as unknown as Partial<Cluster>).nodes?.('master') ?? [];
  for (const node of nodes) {
    const info = await node.info('commandstats');
    const calls = [...info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce((a, m) => a + Number(m[1]), 0);
    out.set(`${node.options.host}:${node.options.port}`, calls);
  }
  return out;
}

/** Per master: calls between two readings, and the largest deviation from their mean (a fraction). */
export function spreadBetween(before: Map<string, number>, after: Map<string, number>): { perNode: [string, number][]; maxDeviation: number } {
  const perNode = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as [string, number]).sort((a, b) => a[0].localeCompare(b[0]));
  const mean = perNode.reduce((a, [, v]) => a + v, 0) / (perNode.length || 1);
  const maxDeviation = mean > 0 ? Math.max(...perNode.map(([, v]) => Math.abs(v - mean) / mean)) : 0;
  return { perNode, maxDeviation };
}
