/**
 * A broker node cut off by a partition (no FIN, no RST): the AMQP heartbeat closes the connection
 * within two silent intervals, and a publish waiting for its confirm on it fails (never confirmed).
 * Without a heartbeat of our own the broker's 60 s applies and the connection hangs for minutes.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.RABBITMQ_HEARTBEAT_SECONDS = '1';
});

import { env } from '@/lib/env';
import { connectMq, withHeartbeat } from '@/lib/mq/connection';
import { TcpProxy } from '@/e2e/support/tcp-proxy';

const direct = env.RABBITMQ_URL.split(',')[0]!.trim();
const target = new URL(direct);
const proxy = new TcpProxy(0, Number(target.port) || 5672, target.hostname);

afterAll(() => proxy.close());

describe('AMQP heartbeat', () => {
  it('asks for RABBITMQ_HEARTBEAT_SECONDS unless the URL names its own', () => {
    expect(withHeartbeat('amqp://h:5672', 5)).toBe('amqp://h:5672?heartbeat=5');
    expect(withHeartbeat('amqp://h:5672/v?frameMax=0', 5)).toBe('amqp://h:5672/v?frameMax=0&heartbeat=5');
    expect(withHeartbeat('amqp://h:5672?heartbeat=30', 5)).toBe('amqp://h:5672?heartbeat=30');
    expect(withHeartbeat('amqp://h:5672', 0)).toBe('amqp://h:5672');
  });

  it('a silent node is given up within seconds; the publish waiting on it is not confirmed; the next node list connects to a live one', async () => {
    await proxy.start();
    const viaProxy = `amqp://${target.username}:${target.password}@127.0.0.1:${proxy.port}${target.pathname}`;
    const conn = await connectMq(viaProxy);
    conn.on('error', () => {});
    const closed = new Promise<number>((r) => conn.on('close', () => r(Date.now())));
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => {});
    await ch.checkExchange('amq.direct');

    proxy.freeze();
    const t0 = Date.now();
    const confirm = new Promise<unknown>((resolve) => {
      ch.publish('amq.direct', 'hmdp-heartbeat-test-nobody', Buffer.from('x'), {}, (err) => resolve(err ?? 'confirmed'));
    });
    const at = await Promise.race([closed, new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), 8000))]);
    expect(at).not.toBe('stalled');
    // Two silent intervals of 1 s, checked once a second.
    expect((at as number) - t0).toBeLessThan(4000);
    const outcome = await Promise.race([confirm, new Promise((r) => setTimeout(() => r('no answer'), 1000))]);
    expect(outcome).toBeInstanceOf(Error);

    // A node list whose first node was cut off: the reconnect goes to the live node first, without
    // waiting out the connect timeout on the silent one.
    proxy.thaw();
    const list = `${viaProxy},${direct}`;
    const onList = await connectMq(list); // lands on the proxy (the first node), now healed
    onList.on('error', () => {});
    const lost = new Promise<unknown>((r) => onList.on('close', r));
    proxy.freeze();
    expect(await lost).toBeInstanceOf(Error);
    const t1 = Date.now();
    const next = await connectMq(list);
    expect(Date.now() - t1).toBeLessThan(2000);
    await (await next.createChannel()).checkExchange('amq.direct');
    await next.close();
  }, 30_000);
});
