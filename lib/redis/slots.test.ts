/**
 * Slot discipline (Redis Cluster refuses CROSSSLOT): the guard every non-production client carries
 * rejects a multi-key command, MULTI, pipeline or script over two slots before it is sent, so the
 * whole test suite — on one Redis or on the cluster — fails on a new call site that would break on
 * a cluster. The static half makes sure nothing reaches Redis around the guard.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { closeRedis, redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript, loadScripts } from '@/lib/redis/scripts';
import { CrossSlotError, slotOf } from '@/lib/redis/slots';

afterAll(closeRedis);

const tag = `slots-test-${process.pid}`;
const a = `${tag}:{a}`;
const b = `${tag}:{b}`;

describe('slotOf', () => {
  it('matches the cluster spec and honours the first non-empty hash tag', () => {
    expect(slotOf('foo')).toBe(12182);
    expect(slotOf('bar')).toBe(5061);
    expect(slotOf('{user1000}.following')).toBe(slotOf('{user1000}.followers'));
    expect(slotOf('foo{}{bar}')).toBe(slotOf('foo{}{bar}')); // empty tag: the whole key is hashed
    expect(slotOf('foo{}{bar}')).not.toBe(slotOf('bar'));
    expect(slotOf(keys.seckillStock('42'))).toBe(slotOf(keys.seckillPending('42')));
  });

  it.runIf(redis instanceof Cluster)('agrees with CLUSTER KEYSLOT on the real cluster', async () => {
    for (const k of [keys.session('x'.repeat(43)), keys.userSessions('7'), keys.seckillStock('9'), 'plain', 'a{b}c{d}']) {
      expect(await (redis as Cluster).cluster('KEYSLOT', k)).toBe(slotOf(k));
    }
  });
});

describe('the guard on the configured client', () => {
  it('refuses a MULTI over two slots and writes nothing', async () => {
    await expect(redis.multi().set(a, '1').set(b, '1').exec()).rejects.toBeInstanceOf(CrossSlotError);
    expect(await redis.exists(a)).toBe(0);
    expect(await redis.exists(b)).toBe(0);
  });

  it('refuses a pipeline over two slots', async () => {
    await expect(redis.pipeline().get(a).get(b).exec()).rejects.toBeInstanceOf(CrossSlotError);
  });

  it('refuses a multi-key command over two slots', async () => {
    await expect(redis.del(a, b)).rejects.toBeInstanceOf(CrossSlotError);
    await expect(redis.mget(a, b)).rejects.toBeInstanceOf(CrossSlotError);
  });

  it('refuses a script whose keys span two slots', async () => {
    await expect(runScript(redis, 'lock-release', [a, b], ['owner'])).rejects.toBeInstanceOf(CrossSlotError);
  });

  it('lets one-slot MULTIs, scripts and multi-key commands through', async () => {
    const one = `${tag}:{a}:other`;
    const res = await redis.multi().set(a, '1', 'EX', 30).set(one, '2', 'EX', 30).exec();
    expect(res?.map(([err]) => err)).toEqual([null, null]);
    expect(await redis.mget(a, one)).toEqual(['1', '2']);
    expect(await redis.del(a, one)).toBe(2);
  });
});

/** Source files of the product (not node_modules, not tests). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' || name.startsWith('.') ? [] : sources(p);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.ts$/.test(name) ? [p] : [];
  });
}

describe('nothing reaches Redis around the guard', () => {
  // Product code; e2e tooling reads keys through its own clients and writes nothing multi-key.
  const files = ['lib', 'app', 'workers', 'scripts'].flatMap((d) => sources(path.join(process.cwd(), d)));
  const commands = [...loadScripts().values()].map((s) => s.command);

  it.each([
    ['a client not made by lib/redis/client.ts', /new (Redis|Cluster)\(/],
    ['raw EVAL / EVALSHA / sendCommand / call', /\.(eval|evalsha|evalRo|evalshaRo|sendCommand|call)\(/],
    ['a Lua script called as a method instead of through runScript', new RegExp(`\\.(${commands.join('|')})\\(`)],
  ])('no %s', (_what, pattern) => {
    // lib/redis/ is where the client, the guard and the script loader are made.
    const offenders = files.filter((f) => !f.includes(path.join('lib', 'redis', '')) && pattern.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(process.cwd(), f))).toEqual([]);
  });
});
