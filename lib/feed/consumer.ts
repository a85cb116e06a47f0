/**
 * The fan-out consumer, run inside the worker process beside the order consumer: its own
 * connection and channel, manual acks after the inboxes are written, reconnect with backoff when
 * the broker goes away, and a stop() that cancels the consumer and waits for in-flight messages.
 * A failing message is requeued; the quorum queue's delivery limit dead-letters a poison one.
 */
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { db as defaultDb, type DB } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { connectMq } from '@/lib/mq/connection';
import { assertFeedTopology, feedNames } from '@/lib/mq/topology';
import { redis as defaultRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { blogExists } from '@/lib/blog/blog.repository';
import { decodeFeedMessage } from '@/lib/feed/message';
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
}

export interface FeedConsumer {
  stop(): Promise<void>;
}

const STOP_BUDGET_MS = 8000;

export async function startFeedConsumer(options: FeedConsumerOptions = {}): Promise<FeedConsumer> {
  const db = options.db ?? defaultDb;
  const redis = options.redis ?? defaultRedis;
  const url = options.rabbitUrl ?? env.RABBITMQ_URL;
  let stopping = false;
  let conn: ChannelModel | undefined;
  let ch: Channel | undefined;
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
    const lost = () => {
      if (conn !== c) return;
      conn = undefined;
      ch = undefined;
      if (!stopping) {
        log.warn('feed consumer lost the broker; reconnecting');
        c.close().catch(() => {});
        reconnect();
      }
    };
    c.on('close', lost);
    channel.on('close', lost);
    channel.on('error', (err: Error) => log.warn({ err: err.message }, 'feed channel error'));
    conn = c;
    ch = channel;
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

  // A broker that is down at start is retried in the background, like a lost one.
  await open().catch((err: Error) => {
    log.warn({ err: err.message }, 'feed consumer: broker unavailable at start; retrying');
    reconnect();
  });
  return {
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      const c = conn;
      const channel = ch;
      if (channel && tag) await channel.cancel(tag).catch(() => {});
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((r) => setTimeout(r, STOP_BUDGET_MS).unref())]);
      conn = undefined;
      await c?.close().catch(() => {});
    },
  };
}
