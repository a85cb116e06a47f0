import { afterAll, describe, expect, it } from 'vitest';
import { closeMq, getPublishChannel } from '@/lib/mq/connection';
import { names } from '@/lib/mq/topology';
import { queueDepth } from '@/lib/admin/queue-depth';

afterAll(async () => {
  await closeMq();
});

describe('queueDepth', () => {
  it('counts ready messages in a real queue', async () => {
    const ch = await getPublishChannel(); // declares the topology
    const queue = `${names.ordersQueue}.admin-depth-test`;
    await ch.assertQueue(queue, { durable: false, autoDelete: false });
    try {
      await ch.purgeQueue(queue);
      for (let i = 0; i < 3; i++) ch.sendToQueue(queue, Buffer.from(String(i)));
      await ch.waitForConfirms();
      expect(await queueDepth(queue)).toBe(3);
    } finally {
      await ch.deleteQueue(queue);
    }
  });

  it('a missing queue reads as unknown and the next check still works', async () => {
    expect(await queueDepth(`${names.ordersQueue}.does-not-exist-${Date.now()}`)).toBeNull();
    expect(await queueDepth(names.ordersQueue)).toEqual(expect.any(Number));
  });
});
