/**
 * The one reader of process.env. Every setting is parsed and typed here; a bad value fails fast
 * with a message naming the variable. Local files (.env, .env.local) are loaded the same way
 * Next.js loads them, so the web server, the worker and the scripts agree.
 */
import nextEnv from '@next/env';
import { z } from 'zod';

nextEnv.loadEnvConfig(process.cwd(), process.env.NODE_ENV !== 'production', { info: () => {}, error: console.error });

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (def: number) => z.coerce.number().int().nonnegative().default(def);

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: z.coerce.number().int().positive().default(3000),
  APP_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: z.string().url().default('mysql://root@127.0.0.1:3306/hmdp'),
  DB_POOL_SIZE: int(20),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
  /** Extra independent Redis nodes for the multi-node (redlock) lock, comma separated. */
  REDLOCK_NODES: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  /** ZooKeeper for the `nodes: 'zookeeper'` lock (host:port, comma separated); empty = that lock is unavailable. */
  ZOOKEEPER_CONNECT: z.string().default(''),
  /** Session timeout asked of ZooKeeper: how long a dead holder keeps a ZooKeeper lock. */
  ZOOKEEPER_SESSION_TIMEOUT_MS: int(10_000),
  /** Redis Cluster seed nodes (host:port, comma separated); when set, every Redis user talks to the cluster and REDIS_URL is unused. */
  REDIS_CLUSTER_NODES: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  /** Milliseconds the grab waits for one replica to acknowledge (WAIT 1 <ms>); 0 = do not wait. */
  SECKILL_REPLICA_WAIT_MS: int(0),
  RABBITMQ_URL: z.string().default('amqp://guest:guest@127.0.0.1:5672'),
  /** Prefix of every exchange and queue name, so tests and several deployments can share a broker. */
  MQ_PREFIX: z.string().regex(/^[a-z0-9_.-]+$/i).default('hmdp'),

  AUTH_SECRET: z.string().min(32, 'AUTH_SECRET must be at least 32 characters (npm run up generates one)'),
  SESSION_TTL_SECONDS: int(30 * 60),

  SMS_PROVIDER: z.enum(['dev']).default('dev'),
  /** The dev SMS provider writes codes where tests can read them; never in production unless forced. */
  ALLOW_DEV_SMS_IN_PRODUCTION: bool.default(false),
  RATE_LIMITS: bool.default(true),
  SMS_COOLDOWN_SECONDS: int(60),
  SMS_DAILY_MAX: int(10),
  SMS_IP_HOURLY_MAX: int(30),
  SECKILL_USER_PER_SECOND: int(5),
  SECKILL_IP_PER_SECOND: int(200),

  /** Shop cache (lib/cache, lib/shop): lifetimes in seconds; every TTL gets up to +JITTER of random extra. */
  CACHE_SHOP_TTL_SECONDS: int(30 * 60),
  CACHE_NULL_TTL_SECONDS: int(60),
  CACHE_TTL_JITTER: z.coerce.number().min(0).max(1).default(0.2),
  /** Hot shops keep their entry forever and refresh it in the background after this long. */
  CACHE_LOGICAL_TTL_SECONDS: int(10 * 60),
  /** Hot shops: these ids plus the top-N by sold (recomputed by `npm run cache:warm`). */
  CACHE_HOT_SHOP_IDS: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((x) => x.trim()).filter((x) => /^[1-9]\d{0,18}$/.test(x))),
  CACHE_HOT_TOP_N: int(5),
  /** How long a reader waits for another instance's rebuild before loading on its own. */
  CACHE_LOCK_WAIT_MS: int(3000),
  /** A cache command slower than this counts as "Redis down" for this read. */
  CACHE_REDIS_TIMEOUT_MS: int(500),
  /** Redis down: at most this many DB loads at once in this process, the rest queue (then 503). */
  CACHE_DB_FALLBACK_CONCURRENCY: int(8),
  /** Enables /api/bench/constant (always on outside production). */
  BENCH_ROUTES: bool.default(false),

  /** `db` is the seeds' synchronous version, kept only for the benchmark comparison. */
  SECKILL_STRATEGY: z.enum(['redis', 'db']).default('redis'),
  WORKER_PREFETCH: int(1000),
  WORKER_BATCH_SIZE: int(500),
  WORKER_BATCH_WAIT_MS: int(20),
  ORDER_MAX_ATTEMPTS: int(5),
  ORDER_RETRY_BASE_MS: int(1000),
  OUTBOX_SWEEP_INTERVAL_MS: int(5000),
  OUTBOX_STALE_MS: int(10000),
  /** Port of the worker's Prometheus /metrics endpoint; 0 = off. */
  WORKER_METRICS_PORT: int(0),
});

export type Env = z.infer<typeof schema>;

function load(): Env {
  const parsed = schema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new Error(`Invalid environment:\n${lines}`);
  }
  return Object.freeze(parsed.data);
}

export const env: Env = load();
export const isProduction = env.NODE_ENV === 'production';
