/**
 * The one Redis client type every module takes. A plain connection and a Redis Cluster client
 * expose the same commands, scripts (defineCommand) and pipelines, so code written against this
 * type runs on either; which one a process gets is decided once, in lib/redis/client.ts.
 * Cluster rule: every multi-key command, MULTI and script touches keys of one hash slot.
 */
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;
