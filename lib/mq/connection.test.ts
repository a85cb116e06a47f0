/**
 * RABBITMQ_URL as a node list: a connection goes to the first node that answers, within the same
 * attempt, and fails only when none does.
 */
import { describe, expect, it } from 'vitest';
import { env } from '@/lib/env';
import { connectMq } from '@/lib/mq/connection';

describe('connectMq over a node list', () => {
  it('skips a node that refuses and lands on a live one, in the same attempt', async () => {
    // Port 1 refuses at once: a dead node.
    const list = `amqp://guest:guest@127.0.0.1:1, ${env.RABBITMQ_URL}`;
    const started = Date.now();
    const a = await connectMq(list);
    const ch = await a.createChannel();
    await ch.checkExchange('amq.direct');
    await a.close();
    const b = await connectMq(list);
    await b.close();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('fails when no node answers', async () => {
    await expect(connectMq('amqp://guest:guest@127.0.0.1:1,amqp://guest:guest@127.0.0.1:2')).rejects.toThrow(/ECONNREFUSED/);
  });
});
