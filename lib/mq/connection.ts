/**
 * One AMQP connection per process with a confirm channel for publishing. When the broker goes
 * away the cached connection is dropped and the next call reconnects; callers see an error in
 * the meantime (the grab path leaves the order in the Redis outbox, the sweeper republishes).
 */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { assertTopology } from '@/lib/mq/topology';

interface MqState {
  conn?: Promise<ChannelModel>;
  pub?: Promise<ConfirmChannel>;
  /** When the last connect attempt failed; callers fail fast for a moment instead of piling up attempts. */
  failedAt?: number;
  /** Per node list: the node the last connection reached, tried first next time. */
  lastGood?: Map<string, number>;
}
/** While the broker is down, a storm of grabs would otherwise each open a socket and wait on it. */
const RECONNECT_HOLD_MS = 1000;
const g = globalThis as unknown as { __hmdpMq?: MqState };
const state: MqState = g.__hmdpMq ?? (g.__hmdpMq = {});

/**
 * Per node list: the node the last connection reached, tried first next time. In the shared state:
 * the web server runs this module twice (its own import and the Next build's copy, one connection
 * between them), and a lost node must be tried last by whichever copy reconnects.
 */
const lastGood = (state.lastGood ??= new Map<string, number>());

/**
 * Connects to one node of `urls` (a comma-separated list, one amqp URL per cluster node:
 * docs/rabbitmq.md#a-cluster): the node that answered last time first, then the others in order,
 * so a reconnect after a node died lands on a live one within the same attempt.
 */
export async function connectMq(urls = env.RABBITMQ_URL): Promise<ChannelModel> {
  const nodes = urls.split(',').map((u) => u.trim()).filter(Boolean);
  const first = lastGood.get(urls) ?? 0;
  let lastErr: unknown;
  for (let i = 0; i < nodes.length; i++) {
    const at = (first + i) % nodes.length;
    try {
      // noDelay: Nagle's algorithm holds small confirmed publishes back until the broker's delayed
      // ACK (tens of ms each); the grab path publishes many small messages.
      const conn = await amqp.connect(withHeartbeat(nodes[at]!), { timeout: 5000, noDelay: true, clientProperties: { connection_name: `hmdp-${process.pid}` } });
      conn.on('error', (err: Error) => log.warn({ err: err.message }, 'rabbitmq connection error'));
      // Lost (a heartbeat timeout, a reset), not closed by us: that node is tried last next time —
      // a node cut off by a partition would hold the reconnect for the whole connect timeout.
      conn.on('close', (err?: Error) => {
        if (err && nodes.length > 1 && lastGood.get(urls) === at) lastGood.set(urls, (at + 1) % nodes.length);
      });
      lastGood.set(urls, at);
      return conn;
    } catch (err) {
      lastErr = err;
      if (nodes.length > 1) log.warn({ err: (err as Error).message, node: at }, 'rabbitmq node unavailable; trying the next');
    }
  }
  // The next attempt starts one node further: the one that failed last is tried last.
  if (nodes.length > 1) lastGood.set(urls, (first + 1) % nodes.length);
  throw lastErr instanceof Error ? lastErr : new Error('no rabbitmq node answered');
}

/**
 * The node's URL asking for RABBITMQ_HEARTBEAT_SECONDS (unless the URL names its own). Without it
 * the broker's 60 s applies, and a node cut off by a partition (no FIN, no RST) holds the
 * connection, and every publish waiting for a confirm on it, for minutes; with it amqplib closes
 * the connection after two silent intervals, the pending confirms fail (503, never 200) and the
 * next call connects to a live node.
 */
export function withHeartbeat(url: string, seconds = env.RABBITMQ_HEARTBEAT_SECONDS): string {
  if (seconds <= 0 || /[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

export function getConnection(): Promise<ChannelModel> {
  if (!state.conn) {
    if (state.failedAt !== undefined && Date.now() - state.failedAt < RECONNECT_HOLD_MS) {
      return Promise.reject(new Error('rabbitmq unavailable (last connect attempt failed moments ago)'));
    }
    const p = connectMq();
    state.conn = p;
    p.then(
      (conn) => {
        state.failedAt = undefined;
        conn.on('close', () => {
          if (state.conn === p) {
            state.conn = undefined;
            state.pub = undefined;
          }
        });
      },
      () => {
        state.failedAt = Date.now();
        if (state.conn === p) state.conn = undefined;
      },
    );
  }
  return state.conn;
}

/** The shared publisher channel (confirm mode), with the topology declared once per channel. */
export function getPublishChannel(): Promise<ConfirmChannel> {
  if (!state.pub) {
    const p = (async () => {
      const conn = await getConnection();
      const ch = await conn.createConfirmChannel();
      ch.on('error', (err: Error) => log.warn({ err: err.message }, 'rabbitmq channel error'));
      ch.on('close', () => {
        if (state.pub === p) state.pub = undefined;
      });
      await assertTopology(ch);
      return ch;
    })();
    state.pub = p;
    p.catch(() => {
      if (state.pub === p) state.pub = undefined;
    });
  }
  return state.pub;
}

export async function closeMq(): Promise<void> {
  const conn = state.conn;
  state.conn = undefined;
  state.pub = undefined;
  state.failedAt = undefined;
  const open = conn ? await conn.catch(() => undefined) : undefined;
  // A broker that vanished never answers close-ok; don't let shutdown wait on it.
  if (open) await Promise.race([open.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000).unref())]);
}
