/**
 * The environment every fault script gives its web instances and workers: production mode, one
 * process per web server (the kills target whole servers, and more Next processes would crowd the
 * 2-core CI box), the private services' URLs, no rate limits and no per-client connection cap (the
 * storm's requests all come from 127.0.0.1), a fast outbox sweep. `extra` adds or overrides.
 */
export function faultEnv(urls: { mysql: string; redis: string; rabbit: string }, mqPrefix: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    WEB_CONCURRENCY: '1',
    DATABASE_URL: urls.mysql,
    REDIS_URL: urls.redis,
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
 * MariaDB and opens a pool and a Redis client on them.
 */
export async function openStores(env: NodeJS.ProcessEnv) {
  Object.assign(process.env, env, { LOG_LEVEL: 'error' });
  const { createDb } = await import('@/lib/db/client');
  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { createRedis } = await import('@/lib/redis/client');
  const { seedDemo } = await import('@/lib/seed/seed');
  await ensureDatabase(env.DATABASE_URL!);
  const db = createDb(env.DATABASE_URL!, 5);
  await migrateToLatest(db);
  const seeded = await seedDemo(db);
  const redis = createRedis(env.REDIS_URL!);
  return { db, redis, seeded };
}
