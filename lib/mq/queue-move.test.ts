/**
 * The classic payment-timeout queues of an earlier version, holding real messages on the real
 * broker, moved into the quorum ones (lib/mq/queue-move.ts): by several movers at once, nothing
 * lost, nothing fired early, the old queues deleted only once empty and unused, a second run a
 * no-op. A window of its own (so its queue names are this test's alone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel, ChannelModel, ConfirmChannel, GetMessage, Message } from 'amqplib';
import { connectMq } from '@/lib/mq/connection';
import { moveLegacyTimeoutQueues, remainingTtl } from '@/lib/mq/queue-move';
import { assertTimeoutTopology, names, TIMEOUT_ROUTING_KEY } from '@/lib/mq/topology';

const WINDOW_MS = 3_541_000;
const conns: ChannelModel[] = [];
let ch: ConfirmChannel;

const open = async () => {
  const c = await connectMq();
  c.on('error', () => {});
  conns.push(c);
  return c;
};

async function dropAll(): Promise<void> {
  const c = await open();
  for (const q of [names.legacyTimeoutDelayQueue(WINDOW_MS), names.legacyTimeoutQueue, names.timeoutDelayQueue(WINDOW_MS), names.timeoutQueue]) {
    const x = await c.createChannel();
    x.on('error', () => {});
    await x.deleteQueue(q).catch(() => undefined);
    await x.close().catch(() => undefined);
  }
}

/** The classic topology exactly as the earlier version declared it. */
async function declareLegacy(c: Channel): Promise<void> {
  await c.assertExchange(names.timeoutExchange, 'direct', { durable: true });
  await c.assertQueue(names.legacyTimeoutQueue, { durable: true, arguments: { 'x-queue-type': 'classic' } });
  await c.bindQueue(names.legacyTimeoutQueue, names.timeoutExchange, TIMEOUT_ROUTING_KEY);
  await c.assertQueue(names.legacyTimeoutDelayQueue(WINDOW_MS), {
    durable: true,
    arguments: { 'x-queue-type': 'classic', 'x-message-ttl': WINDOW_MS, 'x-dead-letter-exchange': names.timeoutExchange, 'x-dead-letter-routing-key': TIMEOUT_ROUTING_KEY },
  });
}

async function drain(c: Channel, queue: string): Promise<GetMessage[]> {
  const out: GetMessage[] = [];
  for (let m = await c.get(queue, { noAck: true }); m; m = await c.get(queue, { noAck: true })) out.push(m);
  return out;
}

async function exists(c: ChannelModel, queue: string): Promise<boolean> {
  const x = await c.createChannel();
  x.on('error', () => {});
  try {
    await x.checkQueue(queue);
    return true;
  } catch {
    return false;
  } finally {
    await x.close().catch(() => undefined);
  }
}

const body = (id: string) => Buffer.from(JSON.stringify({ v: 1, orderId: id }));
const idOf = (m: Message) => (JSON.parse(m.content.toString()) as { orderId: string }).orderId;

beforeAll(async () => {
  await dropAll();
  ch = await (await open()).createConfirmChannel();
});

afterAll(async () => {
  await dropAll();
  for (const c of conns) await c.close().catch(() => undefined);
});

describe('moving the classic payment-timeout queues into quorum ones', () => {
  it('three movers at once: every message moved once, none early, the old queues deleted; a second run does nothing', async () => {
    await declareLegacy(ch);
    const t0 = Date.now();
    // 300 waiting in the old delay queue: 200 of the earlier version (only `expiration`), 100 with
    // the deadline header; 200 already due in the old timeout queue.
    for (let i = 0; i < 300; i++) {
      const headers = i >= 200 ? { 'x-deadline': t0 + 600_000 + i } : undefined;
      ch.sendToQueue(names.legacyTimeoutDelayQueue(WINDOW_MS), body(`1${String(i).padStart(5, '0')}`), { persistent: true, expiration: String(1_000_000 + i), headers, messageId: `d${i}` });
    }
    for (let i = 0; i < 200; i++) ch.sendToQueue(names.legacyTimeoutQueue, body(`2${String(i).padStart(5, '0')}`), { persistent: true, messageId: `t${i}` });
    await ch.waitForConfirms();
    // A quorum queue cannot take the old name: the new ones have their own.
    const probe = await (await open()).createChannel();
    probe.on('error', () => {});
    await expect(probe.assertQueue(names.legacyTimeoutQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })).rejects.toThrow(/PRECONDITION_FAILED/);

    await assertTimeoutTopology(ch, WINDOW_MS);
    const movers = await Promise.all([open(), open(), open()]);
    const results = (await Promise.all(movers.map((c) => moveLegacyTimeoutQueues(c, WINDOW_MS)))).flat();
    expect(results.reduce((a, r) => a + r.moved, 0)).toBe(500);
    // One mover per queue at a time (the others were refused or found it gone); each deleted once.
    expect(results.filter((r) => r.deleted)).toHaveLength(2);
    expect(await exists(movers[0]!, names.legacyTimeoutDelayQueue(WINDOW_MS))).toBe(false);
    expect(await exists(movers[0]!, names.legacyTimeoutQueue)).toBe(false);

    const delayed = await drain(ch, names.timeoutDelayQueue(WINDOW_MS));
    expect(delayed).toHaveLength(300);
    expect(new Set(delayed.map(idOf)).size).toBe(300);
    for (const m of delayed) {
      const i = Number(m.properties.messageId.slice(1));
      const exp = Number(m.properties.expiration);
      // Never later than the original asked for, never early: the earlier version's keep their
      // expiration (an upper bound); the new ones get exactly what is left to their deadline.
      if (i < 200) expect(exp).toBe(1_000_000 + i);
      else {
        expect(exp).toBeLessThanOrEqual(600_000 + i);
        expect(exp).toBeGreaterThan(600_000 + i - (Date.now() - t0) - 1);
      }
    }
    // The timeout queue is the namespace's own: a payment timeout that another run of the suite
    // scheduled 15 min ago may expire into it meanwhile (`timeout-<orderId>`). Only ours count.
    const due = (await drain(ch, names.timeoutQueue)).filter((m) => /^t\d+$/.test(String(m.properties.messageId)));
    expect(due).toHaveLength(200);
    expect(new Set(due.map(idOf)).size).toBe(200);
    expect(due.every((m) => m.properties.expiration === undefined)).toBe(true);

    const again = await moveLegacyTimeoutQueues(movers[1]!, WINDOW_MS);
    expect(again.every((r) => r.absent && r.moved === 0)).toBe(true);
  }, 60_000);

  it('an old-version consumer still on the old queue keeps it (it drains it itself); once it is gone the rest is moved', async () => {
    await declareLegacy(ch);
    await assertTimeoutTopology(ch, WINDOW_MS);
    for (let i = 0; i < 20; i++) ch.sendToQueue(names.legacyTimeoutQueue, body(`3${String(i).padStart(5, '0')}`), { persistent: true });
    await ch.waitForConfirms();
    // An old process consumes the old queue and holds one message unacked.
    const old = await (await open()).createChannel();
    await old.prefetch(1);
    let held: string | undefined;
    await old.consume(names.legacyTimeoutQueue, (m) => {
      if (m) held = idOf(m);
    });
    for (let t = 0; !held && t < 100; t++) await new Promise((r) => setTimeout(r, 20));
    expect(held).toBeDefined();

    const mover = await open();
    const [, first] = await moveLegacyTimeoutQueues(mover, WINDOW_MS);
    expect(first).toMatchObject({ moved: 0, deleted: false });
    expect(first!.kept).toMatch(/ACCESS_REFUSED/);
    expect(await exists(mover, names.legacyTimeoutQueue)).toBe(true);

    // The old process goes away (rolling deploy): its unacked message goes back to the old queue.
    await old.close();
    const [, second] = await moveLegacyTimeoutQueues(mover, WINDOW_MS);
    expect(second).toMatchObject({ moved: 20, deleted: true });
    // (Only ours: see the first test.)
    const due = (await drain(ch, names.timeoutQueue)).filter((m) => !String(m.properties.messageId ?? '').startsWith('timeout-'));
    expect(due.map(idOf).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `3${String(i).padStart(5, '0')}`));
  }, 60_000);

  it('meanwhile, what an old classic delay queue dead-letters reaches the quorum timeout queue too (same exchange)', async () => {
    await declareLegacy(ch);
    await assertTimeoutTopology(ch, WINDOW_MS);
    ch.sendToQueue(names.legacyTimeoutDelayQueue(WINDOW_MS), body('400001'), { persistent: true, expiration: '100' });
    await ch.waitForConfirms();
    let got: GetMessage | false = false;
    for (let t = 0; !got && t < 100; t++) {
      await new Promise((r) => setTimeout(r, 50));
      got = await ch.get(names.timeoutQueue, { noAck: true });
    }
    expect(got && idOf(got)).toBe('400001');
  }, 30_000);

  it('remainingTtl: the deadline header when there is one, else the expiration, capped at the window', () => {
    const m = (expiration?: string, deadline?: number) => ({ properties: { expiration, headers: deadline ? { 'x-deadline': deadline } : {} } }) as unknown as GetMessage;
    expect(remainingTtl(m('5000', 10_000), 60_000, 4000)).toBe(6000);
    expect(remainingTtl(m('5000', 1000), 60_000, 4000)).toBe(0);
    expect(remainingTtl(m('5000'), 60_000)).toBe(5000);
    expect(remainingTtl(m('90000'), 60_000)).toBe(60_000);
    expect(remainingTtl(m(undefined), 60_000)).toBe(60_000);
  });
});
