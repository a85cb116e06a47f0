/**
 * The fan-out consumer, run inside the background worker process beside the order consumer on the
 * shared consumer (lib/mq/consumer.ts): its own connection and channel, manual acks after the
 * inboxes are written, reconnect with backoff when the broker goes away, and a stop() that cancels
 * the consumer and waits for in-flight messages.
 * A failing message is requeued; the quorum queue's delivery limit dead-letters a poison one.
 *
 * The note row is the outbox: `tb_blog.fanout_at` is set once its fan-out finished, and a sweeper
 * republishes notes still unmarked after SWEEP_STALE_MS (the author's publish was refused by a
 * broker that was down, or the message was dead-lettered). A Redis claim lets one worker sweep
 * per interval; a duplicate fan-out would be harmless anyway (inbox writes are idempotent).
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Registry } from 'prom-client';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { startConsumer, type ConsumerSession } from '@/lib/mq/consumer';
import { assertFeedTopology, feedNames } from '@/lib/mq/topology';
import { redis as defaultRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { blogExists, listNotFannedOut, markFannedOut } from '@/lib/blog/blog.repository';
import { keys } from '@/lib/redis/keys';
import { publishFeedOn } from '@/lib/blog/feed-publish';
import { decodeFeedMessage } from '@/lib/blog/feed-message';
import { fanOut, type FanoutResult } from '@/lib/feed/fanout';

export interface FeedConsumerOptions {
  db?: DB;
  redis?: RedisClient;
  rabbitUrl?: string;
  /** Notes fanned out at once by this process. */
  prefetch?: number;
  batch?: number;
  /** Called after each message (tests measure the fan-out with it). */
  onDelivered?: (r: FanoutResult & { blogId: string; ms: number }) => void;
  sweepIntervalMs?: number;
  /** A note unmarked for this long is republished. */
  sweepStaleMs?: number;
  /** Where the consumer's session metrics go (the worker's /metrics). */
  registry?: Registry;
}

export interface FeedConsumer {
  /** Republishes notes whose fan-out never finished; returns how many (tests; the timer runs it anyway). */
  sweepNow(): Promise<number>;
  stop(): Promise<void>;
}

const STOP_BUDGET_MS = 8000;
const SWEEP_BATCH = 200;

export async function startFeedConsumer(options: FeedConsumerOptions = {}): Promise<FeedConsumer> {
  const db = options.db ?? defaultDb;
  const redis = options.redis ?? defaultRedis;
  const url = options.rabbitUrl ?? env.RABBITMQ_URL;
  let session: ConsumerSession | undefined;
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const sweepStaleMs = options.sweepStaleMs ?? 60_000;
  const inFlight = new Set<Promise<void>>();

  async function handle(c: Channel, m: ConsumeMessage): Promise<void> {
    const msg = decodeFeedMessage(m.content);
    if (!msg) {
      log.error({ body: m.content.toString('utf8').slice(0, 200) }, 'feed: unparseable message dead-lettered');
      c.nack(m, false, false);
      return;
    }
    const started = Date.now();
    try {
      const r = await fanOut(db, redis, msg, { batch: options.batch, blogExists: (id) => blogExists(db, id) });
      if (!r.skipped) await markFannedOut(db, msg.blogId);
      c.ack(m);
      options.onDelivered?.({ ...r, blogId: msg.blogId, ms: Date.now() - started });
      log.info({ blogId: msg.blogId, followers: r.followers, ms: Date.now() - started }, 'feed: fanned out');
    } catch (err) {
      log.warn({ err: (err as Error).message, blogId: msg.blogId }, 'feed: fan-out failed; requeued');
      await new Promise((r) => setTimeout(r, 500));
      try {
        c.nack(m, false, true);
      } catch {
        /* the channel died: the broker redelivers anyway */
      }
    }
  }

  async function sweepNow(): Promise<number> {
    const pub = session?.alive ? session.confirm : undefined;
    if (!pub) return 0;
    const claimed = await redis.set(keys.feedSweep(), String(process.pid), 'PX', Math.max(100, sweepIntervalMs - 100), 'NX');
    if (claimed !== 'OK') return 0;
    const stale = await listNotFannedOut(db, new Date(Date.now() - sweepStaleMs), SWEEP_BATCH);
    for (const b of stale) await publishFeedOn(pub, { blogId: b.id, authorId: b.user_id, at: b.create_time.getTime() });
    if (stale.length > 0) log.warn({ notes: stale.length }, 'feed: republished notes whose fan-out never finished');
    return stale.length;
  }
  const sweepTimer = setInterval(() => {
    sweepNow().catch((err: Error) => log.warn({ err: err.message }, 'feed sweep failed'));
  }, sweepIntervalMs);
  sweepTimer.unref();

  // A broker that is down at start is retried in the background, like a lost one.
  const consumer = await startConsumer({
    name: 'feed consumer',
    url,
    queue: feedNames.queue,
    prefetch: options.prefetch ?? 2,
    confirmChannel: true,
    registry: options.registry,
    setup: (s) => assertFeedTopology(s.ch),
    onMessage: (s, m) => {
      const p = handle(s.ch, m).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    onOpened: (s) => {
      session = s;
    },
  });
  return {
    sweepNow,
    async stop() {
      clearInterval(sweepTimer);
      await consumer.stop(() => Promise.allSettled([...inFlight]), STOP_BUDGET_MS);
    },
  };
}
