/**
 * The one long-lived AMQP consumer (docs/rabbitmq.md#the-consumer-module) that the order worker,
 * the payment-timeout consumer and the feed fan-out all run on: a session (connection, consume
 * channel with prefetch, optionally a confirm channel for the consumer's own publishes), reconnect
 * with backoff when the broker, the connection, a channel or the consumer goes away, a graceful
 * stop (cancel, let in-flight work finish and settle, close) and session metrics.
 *
 * The caller keeps what is its own: its topology, what a message means, how its in-flight work
 * drains. Acks are only meaningful on the channel that delivered the message: `settle` drops them
 * once that session is gone (the broker redelivers those messages anyway).
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { Counter, Gauge, type Registry } from 'prom-client';
import { Backoff } from '@/lib/backoff';
import { log } from '@/lib/log';
import { connectMq } from '@/lib/mq/connection';

export interface ConsumerSession {
  readonly conn: ChannelModel;
  /** The consume channel (prefetch applies to it). */
  readonly ch: Channel;
  /** The consumer's own publisher channel, when asked for (`confirmChannel: true`). */
  readonly confirm: ConfirmChannel | undefined;
  /** False once the session is lost or stopped: its acks and publishes mean nothing any more. */
  alive: boolean;
  consumerTag?: string;
}

export interface ConsumerOptions {
  /** Names the consumer in logs and metrics ("order worker", "timeout consumer", "feed consumer"). */
  name: string;
  url: string;
  queue: string;
  prefetch: number;
  /** Also open a confirm channel on the session (retries, dead letters, republishes). */
  confirmChannel?: boolean;
  /** Declares the topology on a fresh session, before consuming starts. */
  setup(s: ConsumerSession): Promise<void>;
  onMessage(s: ConsumerSession, m: ConsumeMessage): void;
  /** A session is consuming (before its first delivery is handled, since they share the turn). */
  onOpened?(s: ConsumerSession): void;
  /** A session was lost: e.g. drop buffered deliveries whose acks are now void. */
  onLost?(s: ConsumerSession): void;
  /** Where the session metrics go (the worker's /metrics); none = not exported. */
  registry?: Registry;
}

export interface AmqpConsumer {
  /** The live session, if any. */
  readonly session: ConsumerSession | undefined;
  /** Runs `fn` on the session unless it is gone (acks, nacks); a failure is logged, not thrown. */
  settle(s: ConsumerSession, fn: () => void): void;
  /**
   * Stops consuming (cancel), waits for `drain` (in-flight work finishing and settling), closes
   * the session. Every step shares one budget: a broker that vanished never answers close-ok.
   */
  stop(drain?: () => Promise<unknown>, budgetMs?: number): Promise<void>;
}

/** Reconnect waits 500 ms, doubling to 5 s, back to 500 ms once a session opens. */
export const RECONNECT_FIRST_MS = 500;
export const RECONNECT_MAX_MS = 5000;
const STOP_BUDGET_MS = 8000;

interface SessionMetrics {
  opened: Counter<'consumer'>;
  lost: Counter<'consumer'>;
  consuming: Gauge<'consumer'>;
  delivered: Counter<'consumer'>;
}
// One set per registry: the three consumers of a process share the worker's registry.
const metricsByRegistry = new WeakMap<Registry, SessionMetrics>();
function sessionMetrics(registry: Registry): SessionMetrics {
  let m = metricsByRegistry.get(registry);
  if (!m) {
    const registers = [registry];
    const labelNames = ['consumer'] as const;
    m = {
      opened: new Counter({ name: 'hmdp_amqp_sessions_opened_total', help: 'Consumer sessions opened (the first and every reconnect)', labelNames, registers }),
      lost: new Counter({ name: 'hmdp_amqp_sessions_lost_total', help: 'Consumer sessions lost to the broker (connection, channel or consumer closed)', labelNames, registers }),
      consuming: new Gauge({ name: 'hmdp_amqp_consuming', help: '1 while the consumer has a live session', labelNames, registers }),
      delivered: new Counter({ name: 'hmdp_amqp_delivered_total', help: 'Messages delivered to the consumer', labelNames, registers }),
    };
    metricsByRegistry.set(registry, m);
  }
  return m;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** Runs `fn` (an ack or nack) on the session unless it is gone; a failure is logged, not thrown. */
export function settle(s: ConsumerSession, fn: () => void, what = 'consumer'): void {
  if (!s.alive) return;
  try {
    fn();
  } catch (err) {
    log.warn({ err: (err as Error).message }, `${what}: ack/nack failed`);
  }
}

/** Opens the first session (or keeps retrying it in the background) and returns the consumer. */
export async function startConsumer(o: ConsumerOptions): Promise<AmqpConsumer> {
  const metrics = o.registry ? sessionMetrics(o.registry) : undefined;
  const label = { consumer: o.name };
  const backoff = new Backoff(RECONNECT_FIRST_MS, RECONNECT_MAX_MS);
  let session: ConsumerSession | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  /** At most one attempt is pending at a time; nothing after stop(). */
  function scheduleReconnect(): void {
    if (stopping || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      open().catch((err: Error) => {
        log.warn({ err: err.message, retryInMs: backoff.peek() }, `${o.name}: broker still unavailable`);
        scheduleReconnect();
      });
    }, backoff.next());
  }

  async function open(): Promise<void> {
    const conn = await connectMq(o.url);
    let s: ConsumerSession | undefined;
    try {
      const ch = await conn.createChannel();
      const confirm = o.confirmChannel ? await conn.createConfirmChannel() : undefined;
      const opened: ConsumerSession = { conn, ch, confirm, alive: true };
      s = opened;
      const lost = (why: string) => {
        if (!opened.alive) return;
        opened.alive = false;
        if (session === opened) {
          session = undefined;
          metrics?.consuming.set(label, 0);
        }
        o.onLost?.(opened);
        if (stopping) return;
        metrics?.lost.inc(label);
        log.warn({ why }, `${o.name} lost the broker; reconnecting`);
        conn.close().catch(() => {});
        scheduleReconnect();
      };
      conn.on('close', () => lost('connection closed'));
      ch.on('close', () => lost('consumer channel closed'));
      ch.on('error', (err: Error) => log.warn({ err: err.message }, `${o.name}: consumer channel error`));
      confirm?.on('close', () => lost('publisher channel closed'));
      confirm?.on('error', (err: Error) => log.warn({ err: err.message }, `${o.name}: publisher channel error`));
      await o.setup(opened);
      await ch.prefetch(o.prefetch);
      const { consumerTag } = await ch.consume(
        o.queue,
        (m) => {
          if (!m) return lost('consumer cancelled by the broker');
          metrics?.delivered.inc(label);
          o.onMessage(opened, m);
        },
        { noAck: false },
      );
      opened.consumerTag = consumerTag;
      if (!opened.alive) throw new Error('session lost while it opened');
      if (stopping) {
        opened.alive = false;
        await conn.close().catch(() => {});
        return;
      }
      session = opened;
      o.onOpened?.(opened);
      backoff.reset();
      metrics?.opened.inc(label);
      metrics?.consuming.set(label, 1);
      log.info({ queue: o.queue, prefetch: o.prefetch }, `${o.name} consuming`);
    } catch (err) {
      // A half-open session (e.g. the topology refused) must not keep its socket.
      if (s) s.alive = false;
      conn.close().catch(() => {});
      throw err;
    }
  }

  try {
    await open();
  } catch (err) {
    log.error({ err: (err as Error).message }, `${o.name} cannot reach the broker yet; retrying in the background`);
    scheduleReconnect();
  }

  return {
    get session() {
      return session;
    },
    settle: (s, fn) => settle(s, fn, o.name),
    async stop(drain, budgetMs = STOP_BUDGET_MS) {
      if (stopping) return;
      stopping = true;
      clearTimeout(timer);
      timer = undefined;
      const deadline = Date.now() + budgetMs;
      const within = (p: Promise<unknown>) => Promise.race([p, sleep(Math.max(0, deadline - Date.now()))]);
      const s = session;
      if (s?.alive && s.consumerTag) await within(s.ch.cancel(s.consumerTag).catch(() => {}));
      // Everything delivered before the cancel is the caller's in-flight work now: let it settle.
      if (drain) await within(drain().catch(() => {}));
      if (s) {
        s.alive = false;
        await within(s.conn.close().catch(() => {}));
      }
      session = undefined;
      metrics?.consuming.set(label, 0);
    },
  };
}
