/**
 * The fan-out consumer, run inside the worker process beside the order consumer: its own
 * connection and channel, manual acks after the inboxes are written, reconnect with backoff when
 * the broker goes away, and a stop() that cancels the consumer and waits for in-flight messages.
 * A failing message is requeued; the quorum queue's delivery limit dead-letters a poison one.
 *
 * The note row is the outbox: `tb_blog.fanout_at` is set once its fan-out finished, and a sweeper
 * republishes notes still unmarked after SWEEP_STALE_MS (the author's publish was refused by a
 * broker that was down, or the message was dead-lettered). A Redis claim lets one worker sweep
 * per interval; a duplicate fan-out would be harmless anyway (inbox writes are idempotent).
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { connectMq } from '@/lib/mq/connection';
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
  let stopping = false;
  let conn: ChannelModel | undefined;
  let ch: Channel | undefined;
  let confirm: ConfirmChannel | undefined;
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const sweepStaleMs = options.sweepStaleMs ?? 60_000;
  let tag: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = 500;
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

  async function open(): Promise<void> {
    const c = await connectMq(url);
    const channel = await c.createChannel();
    const confirmChannel = await c.createConfirmChannel();
    const lost = () => {
      if (conn !== c) return;
      conn = undefined;
      ch = undefined;
      confirm = undefined;
      if (!stopping) {
        log.warn('feed consumer lost the broker; reconnecting');
        c.close().catch(() => {});
        reconnect();
      }
    };
    c.on('close', lost);
    channel.on('close', lost);
    channel.on('error', (err: Error) => log.warn({ err: err.message }, 'feed channel error'));
    confirmChannel.on('close', lost);
    confirmChannel.on('error', (err: Error) => log.warn({ err: err.message }, 'feed publisher channel error'));
    conn = c;
    ch = channel;
    confirm = confirmChannel;
    await assertFeedTopology(channel);
    await channel.prefetch(options.prefetch ?? 2);
    const r = await channel.consume(feedNames.queue, (m) => {
      if (!m) return lost();
      const p = handle(channel, m).finally(() => inFlight.delete(p));
      inFlight.add(p);
    });
    tag = r.consumerTag;
    delay = 500;
  }

  function reconnect(): void {
    if (stopping || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      open().catch((err: Error) => {
        log.warn({ err: err.message }, 'feed consumer: broker still unavailable');
        reconnect();
      });
    }, delay);
    delay = Math.min(delay * 2, 5000);
  }

  async function sweepNow(): Promise<number> {
    const pub = confirm;
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
  await open().catch((err: Error) => {
    log.warn({ err: err.message }, 'feed consumer: broker unavailable at start; retrying');
    reconnect();
  });
  return {
    sweepNow,
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      clearInterval(sweepTimer);
      const c = conn;
      const channel = ch;
      if (channel && tag) await channel.cancel(tag).catch(() => {});
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, STOP_BUDGET_MS).unref())]);
      conn = undefined;
      await c?.close().catch(() => {});
    },
  };
}
