import type { Redis } from 'ioredis';
import type { RedisClient } from '@/lib/redis/types';

/**
 * Where the fault script's private services listen. Redis is one server (`redis`, its URL) or a
 * Redis Cluster (`redisCluster`, the seed nodes host:port,…): then every process talks to the
 * cluster, and REDIS_URL, which lib/env still wants, names its first node.
 */
export type FaultUrls = { mysql: string; rabbit: string } & ({ redis: string } | { redisCluster: string });

/**
 * The environment every fault script gives its web instances and workers: production mode, one
 * process per web server (the kills target whole servers, and more Next processes would crowd the
 * 2-core CI box), the private services' URLs (never a Redis Cluster the caller's environment names
 * unless `redisCluster` is given), no rate limits and no per-client connection cap (the storm's
 * requests all come from 127.0.0.1), a fast outbox sweep. `extra` adds or overrides.
 */
export function faultEnv(urls: FaultUrls, mqPrefix: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const redis =
    'redisCluster' in urls
      ? { REDIS_CLUSTER_NODES: urls.redisCluster, REDIS_URL: `redis://${urls.redisCluster.split(',')[0]}` }
      : { REDIS_CLUSTER_NODES: '', REDIS_URL: urls.redis };
  return {
    ...process.env,
    NODE_ENV: 'production',
    WEB_CONCURRENCY: '1',
    DATABASE_URL: urls.mysql,
    ...redis,
    RABBITMQ_URL: urls.rabbit,
    MQ_PREFIX: mqPrefix,
    AUTH_SECRET: process.env.AUTH_SECRET ?? 'fault-suite-secret-0123456789abcdef0123456789',
    RATE_LIMITS: 'false',
    WEB_MAX_CONNECTIONS_PER_CLIENT: '0',
    LOG_LEVEL: 'warn',
    OUTBOX_SWEEP_INTERVAL_MS: '1000',
    OUTBOX_STALE_MS: '3000',
    ...extra,
  };
}

/**
 * Points this process's lib/ at the private services (lib/ reads the environment when first
 * imported, so call this before any dynamic import of it), then migrates and seeds the private
 * MariaDB and opens a pool and a Redis client on them: a cluster client when `env` names a Redis
 * Cluster (then type it with the `C` parameter, e.g. `openStores<Cluster>(env)`).
 */
export async function openStores<C extends RedisClient = Redis>(env: NodeJS.ProcessEnv) {
  Object.assign(process.env, env, { LOG_LEVEL: 'error' });
  const { createDb } = await import('@/lib/db/client');
  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { createRedis } = await import('@/lib/redis/client');
  const { seedDemo } = await import('@/lib/seed/seed');
  await ensureDatabase(env.DATABASE_URL!);
  const db = createDb(env.DATABASE_URL!, 5);
  await migrateToLatest(db);
  const seeded = await seedDemo(db);
  // createRedis() without a URL opens the cluster when REDIS_CLUSTER_NODES is set.
  const redis = (env.REDIS_CLUSTER_NODES ? createRedis() : createRedis(env.REDIS_URL!)) as C;
  return { db, redis, seeded };
}
