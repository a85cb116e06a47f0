/**
 * Redis memory for the console and /api/health: what one sale's keys take (MEMORY USAGE of its
 * four keys, one pipeline, one hash slot) and what the whole Redis uses against its maxmemory.
 */
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { bucketCount } from '@/lib/seckill/buckets/count';
import { bucketTags } from '@/lib/seckill/buckets/tags';

export async function saleMemoryBytes(redis: RedisClient, vid: string): Promise<number> {
  // A bucketed sale (docs/buckets.md): one pipeline per bucket, each its own slot.
  const tags = bucketTags(vid, await bucketCount(redis, vid));
  const perBucket = await Promise.all(
    tags.map(async (t) => {
      const pipe = redis.pipeline();
      for (const k of [keys.seckillMeta(t), keys.seckillStock(t), keys.seckillBuyers(t), keys.seckillPending(t)]) pipe.memory('USAGE', k);
      const res = (await pipe.exec()) ?? [];
      return res.reduce((sum, [err, n]) => sum + (err ? 0 : Number(n ?? 0)), 0);
    }),
  );
  return perBucket.reduce((a, b) => a + b, 0);
}

export interface RedisMemory {
  usedBytes: number;
  /** 0 = no limit configured. */
  maxBytes: number;
}

export async function redisMemory(redis: RedisClient): Promise<RedisMemory> {
  const info = await redis.info('memory');
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { usedBytes: field('used_memory'), maxBytes: field('maxmemory') };
}

/** A warning when Redis uses more than `ratio` of maxmemory (or of `fallbackBytes` when no limit is set). */
export function memoryWarning(m: RedisMemory, ratio: number, fallbackBytes: number): string | undefined {
  const limit = m.maxBytes > 0 ? m.maxBytes : fallbackBytes;
  if (limit <= 0 || m.usedBytes <= limit * ratio) return undefined;
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  return `Redis uses ${mb(m.usedBytes)} MB, over ${Math.round(ratio * 100)}% of ${mb(limit)} MB${m.maxBytes > 0 ? ' (maxmemory)' : ''}: with noeviction it will refuse writes when full`;
}
