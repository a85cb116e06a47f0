/**
 * How many order messages wait in the orders queue (RabbitMQ's checkQueue). A plain channel of its
 * own, never the publisher's confirm channel: checkQueue on a missing queue makes the broker close
 * the channel (404), which must not take order publishing down with it. Any failure reads as
 * "unknown" (null) so the live page keeps ticking while RabbitMQ is away.
 */
import type { Channel } from 'amqplib';
import { log } from '@/lib/log';
import { getConnection } from '@/lib/mq/connection';
import { names } from '@/lib/mq/topology';

const g = globalThis as unknown as { __hmdpAdminQueueChannel?: Promise<Channel> };

function channel(): Promise<Channel> {
  if (!g.__hmdpAdminQueueChannel) {
    const p = (async () => {
      const ch = await (await getConnection()).createChannel();
      // Without an 'error' listener a channel closed by the broker would crash the process.
      ch.on('error', (err: Error) => log.debug({ err: err.message }, 'queue depth channel closed by broker'));
      ch.on('close', () => {
        if (g.__hmdpAdminQueueChannel === p) g.__hmdpAdminQueueChannel = undefined;
      });
      return ch;
    })();
    g.__hmdpAdminQueueChannel = p;
    p.catch(() => {
      if (g.__hmdpAdminQueueChannel === p) g.__hmdpAdminQueueChannel = undefined;
    });
  }
  return g.__hmdpAdminQueueChannel;
}

export async function queueDepth(queue = names.ordersQueue, timeoutMs = 2000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const check = channel().then((ch) => ch.checkQueue(queue));
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('checkQueue timed out')), timeoutMs)));
    return (await Promise.race([check, timeout])).messageCount;
  } catch (err) {
    log.debug({ err: (err as Error).message, queue }, 'queue depth unknown');
    return null;
  } finally {
    clearTimeout(timer);
  }
}
