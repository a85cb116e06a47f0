/**
 * writePerTurn (REDIS_AUTO_PIPELINING in the web processes, not ioredis' auto-pipelining): the commands of one event-loop turn leave in
 * one socket write per connection, replies and order are those of plain commands, a MULTI in the
 * same turn stays atomic and in place, and a connection that drops and comes back is batched again.
 * On a plain Redis and, in the cluster rerun, on a Redis Cluster (one write per node per turn).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cluster, type Redis } from 'ioredis';
import { createRedis } from '@/lib/redis/client';
import type { RedisClient } from '@/lib/redis/types';
import { writePerTurn } from '@/lib/redis/write-per-turn';
import { waitFor } from '@/e2e/support/fixtures/seckill';

let client: RedisClient;
const prefix = `test:write-per-turn:${process.pid}`;

beforeAll(async () => {
  client = writePerTurn(createRedis());
  await client.ping();
});

afterAll(() => {
  client.disconnect();
});

const nodesOf = (c: RedisClient): Redis[] => (c instanceof Cluster ? c.nodes('master') : [c]);

/** Counts the socket writes of every connection of `c` while `fn` runs (a writev of many commands is one). */
async function countWrites<T>(c: RedisClient, fn: () => Promise<T>): Promise<{ result: T; writes: number[] }> {
  const streams = nodesOf(c).map((n) => n.stream as unknown as { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void });
  const writes = streams.map(() => 0);
  const restore = streams.map((s, i) => {
    const { _write, _writev } = s;
    s._write = function (this: unknown, ...a: unknown[]) {
      writes[i]!++;
      return _write.apply(this, a);
    };
    if (_writev)
      s._writev = function (this: unknown, ...a: unknown[]) {
        writes[i]!++;
        return _writev.apply(this, a);
      };
    return () => Object.assign(s, { _write, _writev });
  });
  try {
    return { result: await fn(), writes };
  } finally {
    restore.forEach((r) => r());
  }
}

describe('writePerTurn', () => {
  it('sends the commands of one turn in one write per connection, each answered as if sent alone (the slot guard refuses none: a shared write is not one atomic unit)', async () => {
    // Keys of many slots (each its own tag): on a cluster they spread over every node.
    const keys = Array.from({ length: 60 }, (_, i) => `${prefix}:{k${i}}`);
    await Promise.all(keys.map((k, i) => client.set(k, String(i), 'EX', 30)));
    const { result, writes } = await countWrites(client, () => Promise.all(keys.map((k) => client.get(k))));
    expect(result).toEqual(keys.map((_, i) => String(i)));
    expect(writes.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    for (const w of writes) expect(w).toBeLessThanOrEqual(1);
  });

  it('keeps the order of a turn, a MULTI among plain commands included', async () => {
    const k = `${prefix}:{order}`;
    await client.del(k);
    const [set, multi, after, last] = await Promise.all([
      client.set(k, '1', 'EX', 30),
      client.multi().incr(k).incr(k).exec(),
      client.get(k),
      client.incr(k),
    ]);
    expect(set).toBe('OK');
    expect(multi).toEqual([
      [null, 2],
      [null, 3],
    ]);
    expect(after).toBe('3');
    expect(last).toBe(4);
  });

  it('a turn of commands after the connection dropped is answered and batched again', async () => {
    const k = `${prefix}:{reconnect}`;
    await client.set(k, 'before', 'EX', 30);
    const node = nodesOf(client).find((n) => n.status === 'ready')!;
    node.stream.destroy(); // the connection drops as on a network fault
    await waitFor('the client to reconnect', async () => node.status === 'ready' && (await client.get(k)) === 'before', 10_000, 20);
    const keys = Array.from({ length: 20 }, (_, i) => `${prefix}:{reconnect}:${i}`);
    const { result, writes } = await countWrites(client, () => Promise.all(keys.map((key) => client.set(key, 'x', 'EX', 30))));
    expect(result).toEqual(keys.map(() => 'OK'));
    // One tag: every key in one slot, one node, one write.
    expect(writes.filter((w) => w > 0)).toEqual([1]);
  });
});
