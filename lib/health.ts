/** Health of the three dependencies, each bounded in time so a hung one reads as "down". */
import { sql } from 'kysely';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { getConnection } from '@/lib/mq/connection';
import { env } from '@/lib/env';
import { memoryWarning, redisMemory } from '@/lib/admin/redis-memory';
import { readPersistence, type Persistence } from '@/lib/redis/persistence';

export interface DependencyStatus {
  ok: boolean;
  ms: number;
  error?: string;
  warning?: string;
}
export interface Health {
  ok: boolean;
  down: string[];
  checks: Record<'mysql' | 'redis' | 'rabbitmq', DependencyStatus>;
  /** How durable the sale in Redis is (AOF/fsync/RDB per master); absent when Redis did not answer. */
  redisPersistence?: Persistence;
}

/**
 * The report as a stranger sees it (GET /api/health without an admin's session): each dependency
 * up or down and how long its check took, which is all a load balancer or `npm run up` reads. The
 * rest tells an attacker how the stores are run: how much of the sale a Redis restart forgets
 * (the persistence report and its warning), the eviction policy and memory use, and a failure's
 * own message (it can name hosts). Those go to an admin only.
 */
export function publicHealth(h: Health): Health {
  const only = (s: DependencyStatus): DependencyStatus => ({ ok: s.ok, ms: s.ms });
  return { ok: h.ok, down: h.down, checks: { mysql: only(h.checks.mysql), redis: only(h.checks.redis), rabbitmq: only(h.checks.rabbitmq) } };
}

async function timed(fn: () => Promise<string | void>, timeoutMs = 2000): Promise<DependencyStatus> {
  const t = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const warning = await Promise.race([
      fn(),
      new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs))),
    ]);
    return { ok: true, ms: Date.now() - t, ...(warning ? { warning } : {}) };
  } catch (e) {
    // Only the failure's kind, never connection strings or stack traces.
    const msg = e instanceof Error ? e.message.replace(/\/\/[^@\s]*@/g, '//***@').slice(0, 200) : 'unavailable';
    return { ok: false, ms: Date.now() - t, error: msg };
  } finally {
    clearTimeout(timer);
  }
}

export interface HealthDeps {
  db: typeof db;
  redis: typeof redis;
  mq: typeof getConnection;
}

export async function checkHealth(deps: HealthDeps = { db, redis, mq: getConnection }): Promise<Health> {
  let persistence: Persistence | undefined;
  const [mysql, redisStatus, rabbitmq] = await Promise.all([
    timed(async () => {
      await sql`SELECT 1`.execute(deps.db);
    }),
    timed(async () => {
      await deps.redis.ping();
      persistence = await readPersistence(deps.redis);
      const policy = (await deps.redis.config('GET', 'maxmemory-policy')) as string[];
      if (policy[1] && policy[1] !== 'noeviction') return `maxmemory-policy is ${policy[1]}; seckill keys may be evicted (use noeviction)`;
      const warnings = [memoryWarning(await redisMemory(deps.redis), env.REDIS_MEMORY_WARN_RATIO, env.REDIS_MEMORY_WARN_BYTES), persistence.warning].filter(Boolean);
      return warnings.length ? warnings.join('; ') : undefined;
    }),
    timed(async () => {
      const conn = await deps.mq();
      // Opening and closing a channel proves the broker answers, not just that a socket is open.
      const ch = await conn.createChannel();
      await ch.close();
    }),
  ]);
  const checks = { mysql, redis: redisStatus, rabbitmq };
  const down = Object.entries(checks).filter(([, s]) => !s.ok).map(([k]) => k);
  return { ok: down.length === 0, down, checks, ...(persistence ? { redisPersistence: persistence } : {}) };
}
