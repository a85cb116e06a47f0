/**
 * The ZooKeeper lock when its server goes away: a server of its own on 127.0.0.1:2283, crashed
 * (SIGKILL) while a lock is held and a waiter queues, and restarted on its data after the session
 * timeout. The holder is told through its abort signal before anybody else can hold the lock;
 * the waiter (never granted, nothing to lose) keeps waiting on a new session and is granted only
 * after the server is back and the holder's old session expired, with a newer fence.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { LockLostError } from '@/lib/lock';
import { runLocked } from '@/lib/lock/core';
import { TestZooKeeper } from '@/e2e/support/zookeeper-server';
import { zookeeperBackend } from '@/lib/lock/zookeeper';

const server = new TestZooKeeper(2283);
const SESSION_MS = 1000;
const backends = [0, 1, 2].map(() => zookeeperBackend(server.connect, SESSION_MS));
const [holderSide, waiterSide, laterSide] = backends as [(typeof backends)[0], (typeof backends)[0], (typeof backends)[0]];

beforeAll(() => server.fresh());
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  server.stop();
});

test('server crashed past the session timeout: the holder is aborted, no two holders overlap', async () => {
  const lock = 'test:zk-restart';
  let heldFence = -1;
  let abortedAt = 0;
  let abortReason: unknown;
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holder = runLocked(holderSide, lock, {}, async (signal, fence) => {
    heldFence = fence;
    held();
    await new Promise<void>((resolve) =>
      signal.addEventListener('abort', () => {
        abortedAt = Date.now();
        abortReason = signal.reason;
        resolve();
      }),
    );
  });
  await isHeld;
  const waiter = runLocked(waiterSide, lock, { waitMs: 30_000 }, async (_signal, fence) => ({ fence, at: Date.now() }));
  await new Promise((r) => setTimeout(r, 200)); // the waiter has queued behind the holder

  const crashedAt = Date.now();
  server.stop();
  await holder;
  expect(abortReason).toBeInstanceOf(LockLostError);
  // Told at once (the connection dropped), long before the server could expire the session.
  expect(abortedAt - crashedAt).toBeLessThan(SESSION_MS);

  await new Promise((r) => setTimeout(r, SESSION_MS * 1.5));
  const restartedAt = Date.now();
  server.start();
  const waited = await waiter;
  expect(waited.at).toBeGreaterThan(restartedAt);
  expect(waited.fence).toBeGreaterThan(heldFence);
  // The restarted server still has the old sessions and their znodes until it expires them.
  const grantedAt = await runLocked(laterSide, lock, { waitMs: 15_000 }, async (_signal, fence) => {
    expect(fence).toBeGreaterThan(heldFence);
    return Date.now();
  });
  expect(grantedAt).toBeGreaterThan(abortedAt);
});
