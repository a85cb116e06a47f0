/**
 * The shared AMQP consumer against the real broker: it reconnects when the broker cancels its
 * consumer (the queue deleted under it) and resumes with a fresh session, retries a setup that
 * failed without leaking its connection, and stop() lets in-flight work settle before closing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ConsumeMessage } from 'amqplib';
import { Registry } from 'prom-client';
import { Backoff } from '@/lib/backoff';
import { env } from '@/lib/env';
import { connectMq } from '@/lib/mq/connection';
import { startConsumer, type AmqpConsumer, type ConsumerSession } from '@/lib/mq/consumer';

const queue = `${env.MQ_PREFIX}.consumer-test.${process.pid}`;
const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const admin = await connectMq();
const adminCh = await admin.createChannel();
let consumer: AmqpConsumer | undefined;

afterAll(async () => {
  await consumer?.stop();
  await adminCh.deleteQueue(queue).catch(() => {});
  await admin.close();
});

describe('the shared AMQP consumer', () => {
  it('resumes on a new session after the broker cancels it, stops only after in-flight work settles', async () => {
    const got: string[] = [];
    const sessions = new Set<ConsumerSession>();
    let lost = 0;
    const hold: { next?: (fn: () => void) => void } = {};
    const registry = new Registry();
    consumer = await startConsumer({
      name: 'test consumer',
      url: env.RABBITMQ_URL,
      queue,
      prefetch: 5,
      registry,
      setup: async (s) => void (await s.ch.assertQueue(queue, { durable: false })),
      onMessage: (s: ConsumerSession, m: ConsumeMessage) => {
        sessions.add(s);
        const done = () => {
          got.push(m.content.toString());
          consumer!.settle(s, () => s.ch.ack(m));
        };
        if (hold.next) hold.next(done);
        else done();
      },
      onLost: () => void lost++,
    });
    adminCh.sendToQueue(queue, Buffer.from('one'));
    await until('the first message', () => got.includes('one'));

    // A real fault: the queue vanishes under the consumer, the broker cancels it.
    await adminCh.deleteQueue(queue);
    await until('the consumer to notice', () => lost === 1);
    await until('a new session', () => consumer!.session?.alive === true && !sessions.has(consumer!.session));
    adminCh.sendToQueue(queue, Buffer.from('two'));
    await until('the message after the reconnect', () => got.includes('two'));
    expect(sessions.size).toBe(2);
    const text = await registry.metrics();
    expect(text).toMatch(/hmdp_amqp_sessions_opened_total\{consumer="test consumer"\} 2/);
    expect(text).toMatch(/hmdp_amqp_sessions_lost_total\{consumer="test consumer"\} 1/);

    // stop() waits for the held message to be handled and acked before it closes the session.
    let release: (() => void) | undefined;
    hold.next = (fn) => (release = fn);
    adminCh.sendToQueue(queue, Buffer.from('three'));
    await until('the held delivery', () => release !== undefined);
    const stopped = consumer.stop(() => until('the held message to settle', () => got.includes('three')));
    await new Promise((r) => setTimeout(r, 200));
    expect(consumer.session?.alive).toBe(true);
    release!();
    await stopped;
    expect(consumer.session).toBeUndefined();
    // It was acked before the close: nothing is left to redeliver.
    expect((await adminCh.checkQueue(queue)).messageCount).toBe(0);
  }, 30_000);

  it('a setup that fails is retried with backoff until a session consumes', async () => {
    let tries = 0;
    const c = await startConsumer({
      name: 'failing setup',
      url: env.RABBITMQ_URL,
      queue,
      prefetch: 1,
      setup: async (s) => {
        tries++;
        if (tries < 3) {
          // A refused declaration closes the channel; the session must close its connection too.
          await s.ch.checkQueue(`${queue}.missing`);
        }
      },
      onMessage: () => {},
    });
    expect(c.session).toBeUndefined();
    await until('the third try to consume', () => c.session?.alive === true, 10_000);
    expect(tries).toBe(3);
    await c.stop();
  }, 15_000);
});

describe('Backoff', () => {
  it('doubles to the cap and starts over after reset', () => {
    const b = new Backoff(500, 5000);
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    b.reset();
    expect(b.next()).toBe(500);
  });
});
