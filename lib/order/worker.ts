/**
 * Order worker lifecycle. Connects to RabbitMQ, declares the topology and (in the flash-sale
 * issue) consumes orders. This file owns start/stop so tests can run a worker in-process.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { connectMq } from '@/lib/mq/connection';
import { assertTopology } from '@/lib/mq/topology';
import { closeDb } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';

export interface OrderWorker {
  stop(): Promise<void>;
}

export async function startOrderWorker(): Promise<OrderWorker> {
  const conn: ChannelModel = await connectMq();
  const ch: Channel = await conn.createChannel();
  await assertTopology(ch);
  return {
    async stop() {
      await ch.close().catch(() => {});
      await conn.close().catch(() => {});
      await Promise.all([closeDb(), closeRedis()]);
    },
  };
}
