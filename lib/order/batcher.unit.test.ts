/**
 * The worker's batcher: every partial batch waits for more (up to the wait after its oldest
 * delivery), a full batch goes at once, idle() does not wait for batches to fill, and a discard
 * during a wait leaves nothing behind.
 */
import { describe, expect, it } from 'vitest';
import { Batcher } from '@/lib/order/batcher';
import type { Delivery } from '@/lib/order/handler';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function delivery(n: number): Delivery & { n: number } {
  return { n, body: Buffer.from(String(n)), attempts: 0, ack() {}, requeue() {} };
}

function recorder(handleMs = 0) {
  const batches: { items: number[]; at: number }[] = [];
  const handle = async (batch: (Delivery & { n: number })[]) => {
    batches.push({ items: batch.map((d) => d.n), at: Date.now() });
    if (handleMs) await sleep(handleMs);
  };
  return { batches, handle };
}

describe('order batcher', () => {
  it('under a steady stream every batch gathers for the wait, not only the first', async () => {
    const { batches, handle } = recorder(3);
    const b = new Batcher(handle, 500, 40, () => {});
    const started = Date.now();
    let n = 0;
    while (Date.now() - started < 400) {
      b.push(delivery(n++));
      await sleep(2);
    }
    await b.idle();
    expect(batches.flatMap((x) => x.items)).toEqual(Array.from({ length: n }, (_, i) => i)); // all, once, in order
    // ~400 ms of pushes with a 40 ms wait: about ten batches. Without the wait after the first, a
    // batch would leave as soon as the one before it ended (3 ms) and hold a push or two.
    expect(batches.length).toBeLessThanOrEqual(14);
    const full = batches.slice(0, -1); // the last one was cut short by idle()
    expect(Math.min(...full.map((x) => x.items.length))).toBeGreaterThan(4);
  });

  it('a full batch goes at once; idle() hands over a partial one without waiting', async () => {
    const { batches, handle } = recorder();
    const b = new Batcher(handle, 10, 10_000, () => {});
    const t0 = Date.now();
    for (let i = 0; i < 25; i++) b.push(delivery(i));
    await sleep(20);
    expect(batches.map((x) => x.items.length)).toEqual([10, 10]); // the 5 left wait for more
    await b.idle();
    expect(batches.map((x) => x.items.length)).toEqual([10, 10, 5]);
    expect(Date.now() - t0).toBeLessThan(2000); // not the 10 s wait
  });

  it('a partial batch leaves after the wait on its own, and a discard during the wait leaves nothing', async () => {
    const { batches, handle } = recorder();
    const b = new Batcher(handle, 100, 50, () => {});
    const t0 = Date.now();
    b.push(delivery(1));
    b.push(delivery(2));
    await sleep(120);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.items).toEqual([1, 2]);
    expect(batches[0]!.at - t0).toBeGreaterThanOrEqual(45);

    b.push(delivery(3));
    b.push(delivery(4));
    b.discard((d) => (d as Delivery & { n: number }).n !== 3);
    await sleep(120);
    expect(batches.map((x) => x.items)).toEqual([[1, 2], [4]]);
    b.discard(() => false);
    b.push(delivery(5));
    b.discard(() => false); // emptied while waiting: the loop ends without handing anything over
    await sleep(120);
    await b.idle();
    expect(batches.map((x) => x.items)).toEqual([[1, 2], [4]]);
  });

  it('a failing batch goes to onError and the next batches still run', async () => {
    const seen: number[][] = [];
    const failed: number[][] = [];
    const b = new Batcher<Delivery & { n: number }>(
      async (batch) => {
        seen.push(batch.map((d) => d.n));
        if (batch.some((d) => d.n === 0)) throw new Error('boom');
      },
      2,
      10,
      (_err, batch) => failed.push(batch.map((d) => d.n)),
    );
    for (let i = 0; i < 5; i++) b.push(delivery(i));
    await b.idle();
    expect(seen).toEqual([[0, 1], [2, 3], [4]]);
    expect(failed).toEqual([[0, 1]]);
  });
});
