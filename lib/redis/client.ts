import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { env, isProduction } from '@/lib/env';
import { log } from '@/lib/log';
import { defineScripts } from '@/lib/redis/scripts';
import { guardSlots } from '@/lib/redis/slots';
import { writePerTurn } from '@/lib/redis/write-per-turn';
import { runRedisCloseHooks } from '@/lib/redis/close-hooks';
import type { RedisClient } from '@/lib/redis/types';

export type { Redis, RedisClient };

/**
 * A cut link (a partition: no FIN, no RST) stalls every command on it until TCP gives up, minutes
 * later; bounded, the caller fails in about a second and answers 503 (docs/redis-cluster.md#commands-time-out).
 * Never shorter than the grab's WAIT for a replica, which legitimately takes up to that long.
 * A command that times out may still have run: callers that write must treat it as "unknown".
 */
export const commandTimeoutMs =
  env.REDIS_COMMAND_TIMEOUT_MS > 0 ? Math.max(env.REDIS_COMMAND_TIMEOUT_MS, env.SECKILL_REPLICA_WAIT_MS > 0 ? env.SECKILL_REPLICA_WAIT_MS + 500 : 0) : undefined;

const commandDefaults: RedisOptions = {
  maxRetriesPerRequest: 2,
  connectTimeout: 3000,
  enableOfflineQueue: true,
  // Reconnect forever with a capped backoff; callers see fast errors meanwhile.
  retryStrategy: (times) => Math.min(times * 200, 2000),
  ...(commandTimeoutMs !== undefined ? { commandTimeout: commandTimeoutMs } : {}),
};


/** Outside production every client refuses cross-slot calls, so one-node test runs catch them. */
function prepare<T extends RedisClient>(client: T, where: string): T {
  client.on('error', (err: Error) => log.warn({ err: err.message, url: where }, 'redis connection error'));
  defineScripts(client);
  // Commands issued in one event-loop turn by concurrent requests go out as one write (the web
  // server turns it on for its own processes; lib/redis/write-per-turn.ts).
  if (env.REDIS_AUTO_PIPELINING) writePerTurn(client);
  return isProduction ? client : guardSlots(client);
}

/**
 * A client of the configured Redis: the cluster when REDIS_CLUSTER_NODES is set, else REDIS_URL.
 * With an explicit url, always that one node (throwaway test servers, the redlock nodes).
 */
export function createRedis(url?: undefined, options?: RedisOptions): RedisClient;
export function createRedis(url: string, options?: RedisOptions): Redis;
export function createRedis(url?: string, options: RedisOptions = {}): RedisClient {
  if (url === undefined && env.REDIS_CLUSTER_NODES.length > 0) return createCluster(env.REDIS_CLUSTER_NODES, options);
  const target = url ?? env.REDIS_URL;
  return prepare(new Redis(target, { ...commandDefaults, ...options }), redactUrl(target));
}

export function createCluster(nodes: string[], options: RedisOptions = {}, clusterOptions: ClusterOptions = {}): Cluster {
  const seeds = nodes.map((n) => {
    const [host, port] = n.replace(/^redis:\/\//, '').split(':');
    return { host: host || '127.0.0.1', port: Number(port) || 6379 };
  });
  const cluster = new Cluster(seeds, {
    redisOptions: { ...commandDefaults, ...options },
    // A failover moves slots: re-read the map on MOVED and retry a command that met a dead master.
    // A master cut off by a partition sends no MOVED and no error: its commands time out
    // (commandTimeout) and the periodic re-read finds the promoted replica, so new commands stop
    // going down the dead link within about a second of the failover.
    slotsRefreshTimeout: 1000,
    ...(env.REDIS_SLOTS_REFRESH_INTERVAL_MS > 0 ? { slotsRefreshInterval: env.REDIS_SLOTS_REFRESH_INTERVAL_MS } : {}),
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 100,
    maxRedirections: 16,
    clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
    ...clusterOptions,
  });
  return prepare(cluster, `cluster ${seeds.map((s) => `${s.host}:${s.port}`).join(',')}`);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}

/** Every node that serves commands: the masters of a cluster, or the one server. */
export function masterNodes(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

const g = globalThis as unknown as { __hmdpRedis?: RedisClient };
/** The process-wide connection for commands (not for SUBSCRIBE: use `redis.duplicate()`). */
export const redis: RedisClient = g.__hmdpRedis ?? (g.__hmdpRedis = createRedis());

export async function closeRedis(): Promise<void> {
  if (g.__hmdpRedis) {
    const r = g.__hmdpRedis;
    g.__hmdpRedis = undefined;
    await runRedisCloseHooks(r); // the refusal memory's and session cache's subscribers are duplicates of this client
    // QUIT waits in the offline queue forever when the server is gone: give it a moment, then cut.
    await Promise.race([r.quit().catch(() => {}), new Promise((res) => setTimeout(res, 1000).unref())]);
    r.disconnect();
  }
}
