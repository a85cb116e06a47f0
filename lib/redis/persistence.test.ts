/**
 * Persistence reporting on a redis-server of our own (CONFIG SET changes its mode between cases):
 * every mode that can forget an acknowledged grab is named, fsync always is not, and /api/health
 * carries the report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '@/e2e/support/redis-server';
import { closeDb, db } from '@/lib/db/client';
import { checkHealth } from '@/lib/health';
import { closeMq, getConnection } from '@/lib/mq/connection';
import { closeRedis, createRedis, type Redis } from '@/lib/redis/client';
import { readPersistence } from '@/lib/redis/persistence';

let server: RedisServer;
let client: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  client = createRedis(server.url);
});
afterAll(async () => {
  client.disconnect();
  await server.kill();
  await closeMq();
  await closeDb();
  await closeRedis();
});

async function mode(aof: 'yes' | 'no', fsync: string, save: string) {
  await client.config('SET', 'appendfsync', fsync);
  await client.config('SET', 'save', save);
  await client.config('SET', 'appendonly', aof);
  return readPersistence(client);
}

describe('Redis persistence report', () => {
  it('no persistence at all: a restart forgets the whole sale', async () => {
    const p = await mode('no', 'everysec', '');
    expect(p.nodes).toEqual([{ aof: false, fsync: 'everysec', rdbSave: '', warning: expect.stringContaining('没有开启任何持久化') }]);
    expect(p.warning).toContain('没有开启任何持久化');
  });

  it('RDB snapshots only: everything since the last snapshot', async () => {
    expect((await mode('no', 'everysec', '3600 1')).warning).toContain('RDB');
  });

  it('AOF everysec: up to about a second', async () => {
    expect((await mode('yes', 'everysec', '')).warning).toContain('everysec');
  });

  it('AOF always: no warning', async () => {
    const p = await mode('yes', 'always', '');
    expect(p.warning).toBeNull();
    expect(p.nodes[0]).toMatchObject({ aof: true, fsync: 'always' });
  });

  it('/api/health carries the report and warns on the Redis check', async () => {
    await mode('no', 'everysec', '');
    const h = await checkHealth({ db, redis: client, mq: getConnection });
    expect(h.ok).toBe(true);
    expect(h.redisPersistence?.nodes[0]?.aof).toBe(false);
    expect(h.checks.redis.warning).toContain('没有开启任何持久化');
    expect(JSON.stringify(h)).not.toContain(String(server.port)); // no node addresses on a public route
  });
});
