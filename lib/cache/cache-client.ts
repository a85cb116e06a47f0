/**
 * The cache-aside client every cached read goes through (the original 黑马点评's CacheClient, done properly).
 *
 *   hit            → the value; a logically expired hot entry is served stale at once while
 *                    exactly one background rebuild runs (breakdown, no waiting)
 *   "" marker      → null: the DB has no such row (penetration; short TTL)
 *   miss           → one loader across all instances (lib/lock mutex); the others poll the key
 *                    with backoff until a deadline, then load on their own (breakdown, bounded)
 *   every write    → fenced (lib/lock setIfFenceNewer): never over a newer rebuild, never after an
 *                    invalidation that happened while loading; TTLs get random extra (avalanche)
 *   Redis down     → loud log, the loader runs through a per-process semaphore (pages keep working)
 *
 * Concurrent reads of one key inside one process share a single promise (single flight), so a
 * burst costs one Redis round trip per instance.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';
import { boundFenceCounter, invalidateFenced, setIfFenceNewer, tryWithLock, withLock } from '@/lib/lock';
import { decodeEntry, encodeEntry, isStale, jitteredMs, NULL_MARKER } from '@/lib/cache/entry';
import { Semaphore } from '@/lib/cache/semaphore';

export interface CacheSpec<T> {
  /** A key from lib/redis/keys.ts. */
  key: string;
  /** Reads the source of truth; null means "no such row" and is cached as the marker. */
  load: () => Promise<T | null>;
  ttlSeconds: number;
  nullTtlSeconds?: number;
  /** Store with logical expiration (hot keys); asked only when the entry is (re)built. */
  logical?: boolean | (() => Promise<boolean>);
  logicalSeconds?: number;
  /**
   * The shape version of T (`shapeOf` in lib/cache/entry.ts): stored with each entry, and an
   * entry of another shape is rebuilt rather than served.
   */
  shape?: string;
}

export interface CacheClientOptions {
  jitter?: number;
  lockWaitMs?: number;
  leaseMs?: number;
  redisTimeoutMs?: number;
  /** Caps DB loads while Redis is down; shared by every client of the process by default. */
  fallback?: Semaphore;
  singleFlight?: boolean;
}

type RebuildMode = 'fill' | 'refresh' | 'force';

/** A Redis command failed or was skipped because Redis is known to be down. */
class RedisUnavailable extends Error {}
/** Wraps loader errors so they are told apart from Redis trouble and rethrown as they were. */
class LoadFailed extends Error {
  constructor(readonly original: unknown) {
    super('cache loader failed');
  }
}

const DOWN_STATES = new Set(['reconnecting', 'close', 'end']);
/** After a failed command, skip Redis for this long instead of making every read wait. */
const BREAKER_MS = 1000;
const LOUD_LOG_EVERY_MS = 5000;
/** Hot entries outlive their logical expiry by this much, so Redis can still drop abandoned ones. */
const HOT_RETENTION_MS = 24 * 3600_000;

export const processFallback = new Semaphore(env.CACHE_DB_FALLBACK_CONCURRENCY, env.CACHE_DB_FALLBACK_CONCURRENCY * 25);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class CacheClient {
  private readonly inflight = new Map<string, Promise<unknown>>();
  private readonly refreshing = new Map<string, Promise<unknown>>();
  private readonly unsentInvalidations = new Set<string>();
  private downUntil = 0;
  private lastLoudLog = 0;
  private fallbacksSinceLog = 0;
  private readonly jitter: number;
  private readonly lockWaitMs: number;
  private readonly leaseMs: number;
  private readonly redisTimeoutMs: number;
  private readonly singleFlight: boolean;
  readonly fallback: Semaphore;

  constructor(
    readonly redis: RedisClient,
    opts: CacheClientOptions = {},
  ) {
    this.jitter = opts.jitter ?? env.CACHE_TTL_JITTER;
    this.lockWaitMs = opts.lockWaitMs ?? env.CACHE_LOCK_WAIT_MS;
    this.leaseMs = opts.leaseMs ?? 10_000;
    this.redisTimeoutMs = opts.redisTimeoutMs ?? env.CACHE_REDIS_TIMEOUT_MS;
    this.singleFlight = opts.singleFlight ?? true;
    this.fallback = opts.fallback ?? processFallback;
    redis.on('ready', () => void this.flushInvalidations());
  }

  get<T>(spec: CacheSpec<T>): Promise<T | null> {
    if (!this.singleFlight) return this.read(spec);
    const pending = this.inflight.get(spec.key) as Promise<T | null> | undefined;
    if (pending) return pending;
    const p = this.read(spec).finally(() => this.inflight.delete(spec.key));
    this.inflight.set(spec.key, p);
    return p;
  }

  /** Rebuilds now, waiting for the lock (warm-up); the result is stored like any rebuild. */
  async refresh<T>(spec: CacheSpec<T>): Promise<T | null> {
    try {
      return await withLock(this.lockName(spec), { leaseMs: this.leaseMs, waitMs: this.lockWaitMs }, (signal, fence) => this.rebuild(spec, signal, fence, 'force'));
    } catch (e) {
      throw e instanceof LoadFailed ? e.original : e;
    }
  }

  /**
   * Deletes entries after their source changed (the DB write has committed) and raises each
   * key's fence past every grant of its rebuild lock handed out so far, so a rebuild that read
   * the DB before the write cannot store what it read (lib/lock invalidateFenced).
   * Never throws: when Redis is unreachable the keys are retried as soon as it is back.
   */
  async invalidate(...cacheKeys: string[]): Promise<boolean> {
    const results = await Promise.all(
      cacheKeys.map(async (key) => {
        try {
          await this.cmd(() => invalidateFenced(this.redis, lockNameFor(key), key), false);
          this.unsentInvalidations.delete(key);
          return true;
        } catch (e) {
          this.unsentInvalidations.add(key);
          log.error({ key, err: errMessage(e) }, 'CACHE: invalidation failed, will retry when Redis is back');
          return false;
        }
      }),
    );
    return results.every(Boolean);
  }

  /**
   * For Redis reads that are not one key → one value (GEO search, live counters): the Redis way
   * while Redis answers within `timeoutMs`, else the DB way, through the same cap and loud log.
   */
  async withFallback<R>(label: string, viaRedis: () => Promise<R>, viaDb: () => Promise<R>, timeoutMs = this.redisTimeoutMs): Promise<R> {
    try {
      return await this.cmd(viaRedis, true, timeoutMs);
    } catch (e) {
      this.reportDown(label, e);
      return this.fallback.run(viaDb);
    }
  }

  /** Resolves when no background refresh is running (tests, graceful shutdown). */
  async idle(): Promise<void> {
    while (this.refreshing.size) await Promise.allSettled([...this.refreshing.values()]);
  }

  private async read<T>(spec: CacheSpec<T>): Promise<T | null> {
    try {
      const entry = decodeEntry<T>(await this.cmd(() => this.redis.get(spec.key)), spec.shape);
      if (entry.kind === 'null') return null;
      if (entry.kind === 'value') {
        if (isStale(entry)) this.refreshInBackground(spec);
        return entry.value;
      }
      return await this.fillWithMutex(spec);
    } catch (e) {
      if (e instanceof LoadFailed) throw e.original;
      if (e instanceof AppError) throw e; // the fallback queue is full: 503, not another DB load
      return this.fromDb(spec, e);
    }
  }

  /** Miss: one loader per key across instances; the rest re-read with backoff, bounded in time. */
  private async fillWithMutex<T>(spec: CacheSpec<T>): Promise<T | null> {
    const deadline = Date.now() + this.lockWaitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      const r = await tryWithLock(this.lockName(spec), { leaseMs: this.leaseMs }, (signal, fence) => this.rebuild(spec, signal, fence, 'fill'));
      if (r.acquired) return r.value;
      if (Date.now() + delay > deadline) {
        log.warn({ key: spec.key, waitedMs: this.lockWaitMs }, 'CACHE: rebuild elsewhere is slow; this read loads from the database');
        return this.fallback.run(() => this.load(spec));
      }
      await sleep(delay + Math.random() * delay);
      const entry = decodeEntry<T>(await this.cmd(() => this.redis.get(spec.key)), spec.shape);
      if (entry.kind === 'null') return null;
      if (entry.kind === 'value') return entry.value;
    }
  }

  private refreshInBackground<T>(spec: CacheSpec<T>): void {
    if (this.refreshing.has(spec.key)) return;
    const task = tryWithLock(this.lockName(spec), { leaseMs: this.leaseMs }, (signal, fence) => this.rebuild(spec, signal, fence, 'refresh'))
      .catch((e) => log.warn({ key: spec.key, err: errMessage(e instanceof LoadFailed ? e.original : e) }, 'CACHE: background refresh failed; the stale entry stays'))
      .finally(() => this.refreshing.delete(spec.key));
    this.refreshing.set(spec.key, task);
  }

  /** Runs holding the key's lock: re-check, load, fenced store. */
  private async rebuild<T>(spec: CacheSpec<T>, signal: AbortSignal, fence: number, mode: RebuildMode): Promise<T | null> {
    const current = decodeEntry<T>(await this.cmd(() => this.redis.get(spec.key)), spec.shape);
    // Another reader rebuilt between our look and the lock: nothing to load. If it stored the
    // "not in DB" marker, this grant set the lock's fence counter to a day again: bound it to the
    // marker's life, as the store that wrote the marker did (a stranger names these ids).
    if (mode === 'fill' && current.kind !== 'miss') {
      if (current.kind === 'value') return current.value;
      await this.cmd(() => boundFenceCounter(this.redis, this.lockName(spec), jitteredMs(spec.nullTtlSeconds ?? env.CACHE_NULL_TTL_SECONDS, this.jitter)));
      return null;
    }
    if (mode === 'refresh' && current.kind === 'value' && !isStale(current)) return current.value;
    const value = await this.load(spec);
    // A lost lease means a newer holder may be writing: its data wins (the fence would refuse ours anyway).
    if (signal.aborted) return value;
    const stored = await this.store(spec, value, fence).catch((e) => (this.reportDown(spec.key, e), true));
    // Refused: the source changed (an invalidation) after this load read it. What it read may be the
    // old row, and every reader who joined this load in this process (get's single flight) came
    // after, perhaps after the edit answered: they get a load made after the change instead, not
    // stored (this lock's fence is behind for good; the next reader's rebuild stores).
    return stored ? value : this.load(spec);
  }

  /** Stores a rebuild's value; false when the fence refused it (a newer rebuild wrote, or the key was invalidated). */
  private async store<T>(spec: CacheSpec<T>, value: T | null, fence: number): Promise<boolean> {
    let payload = NULL_MARKER;
    let ttlMs = jitteredMs(spec.nullTtlSeconds ?? env.CACHE_NULL_TTL_SECONDS, this.jitter);
    if (value !== null) {
      const logical = typeof spec.logical === 'function' ? await spec.logical().catch(() => false) : spec.logical === true;
      if (logical) {
        const logicalMs = jitteredMs(spec.logicalSeconds ?? env.CACHE_LOGICAL_TTL_SECONDS, this.jitter);
        payload = encodeEntry(value, Date.now() + logicalMs, spec.shape);
        ttlMs = logicalMs + HOT_RETENTION_MS;
      } else {
        payload = encodeEntry(value, 0, spec.shape);
        ttlMs = jitteredMs(spec.ttlSeconds, this.jitter);
      }
    }
    // The marker is what a stranger creates by asking for any id: its fence bookkeeping expires with it.
    const isMarker = value === null;
    const written = await this.cmd(() => setIfFenceNewer(this.redis, spec.key, payload, fence, ttlMs, isMarker ? ttlMs : undefined));
    if (isMarker) await this.cmd(() => boundFenceCounter(this.redis, this.lockName(spec), ttlMs));
    if (!written) log.debug({ key: spec.key, fence }, 'CACHE: late rebuild not stored (a newer fence wrote or invalidated)');
    return Boolean(written);
  }

  private async load<T>(spec: CacheSpec<T>): Promise<T | null> {
    try {
      return await spec.load();
    } catch (e) {
      throw new LoadFailed(e);
    }
  }

  private async fromDb<T>(spec: CacheSpec<T>, reason: unknown): Promise<T | null> {
    this.reportDown(spec.key, reason);
    return this.fallback.run(spec.load);
  }

  /** One Redis command, bounded in time; failures open a short breaker so reads stop waiting. */
  private async cmd<R>(fn: () => Promise<R>, useBreaker = true, timeoutMs = this.redisTimeoutMs): Promise<R> {
    if (useBreaker && (Date.now() < this.downUntil || DOWN_STATES.has(this.redis.status))) {
      throw new RedisUnavailable(`redis is ${this.redis.status}`);
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        fn(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new RedisUnavailable(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (e) {
      this.downUntil = Date.now() + BREAKER_MS;
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private reportDown(key: string, reason: unknown): void {
    this.fallbacksSinceLog++;
    const now = Date.now();
    if (now - this.lastLoudLog < LOUD_LOG_EVERY_MS) return;
    log.error(
      { key, reason: errMessage(reason), fallbacks: this.fallbacksSinceLog, dbConcurrency: this.fallback.max },
      'CACHE DOWN: RedisClient unavailable, reads go to the database (capped per process)',
    );
    this.lastLoudLog = now;
    this.fallbacksSinceLog = 0;
  }

  private async flushInvalidations(): Promise<void> {
    if (this.unsentInvalidations.size) await this.invalidate(...this.unsentInvalidations);
  }

  private lockName(spec: CacheSpec<unknown>): string {
    return lockNameFor(spec.key);
  }
}

/** The rebuild lock of a cache key: `cache:shop:{1}` → `shop:1` (lib/lock makes it `lock:{shop:1}`). */
export function lockNameFor(key: string): string {
  return key.replace(/^cache:/, '').replace(/[{}]/g, '');
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
