/**
 * LOCK_BACKEND and the settings it needs are checked when lib/env loads (every process's start):
 * a backend without its nodes is refused with a message naming the variable, and the default
 * (redis) needs nothing.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { crossFieldProblems, envSchema, redlockNodes } from '@/lib/env';

const base = { AUTH_SECRET: 'x'.repeat(32), REDIS_URL: 'redis://127.0.0.1:6379/3' };
const problems = (vars: Record<string, string>) => crossFieldProblems(envSchema.parse({ ...base, ...vars }));

describe('LOCK_BACKEND settings', () => {
  test('redis (the default) needs nothing else', () => {
    expect(envSchema.parse(base).LOCK_BACKEND).toBe('redis');
    expect(problems({})).toEqual([]);
  });

  test('redlock needs 3 nodes of one db index, REDIS_URL counted unless a cluster replaces it', () => {
    expect(problems({ LOCK_BACKEND: 'redlock' })).toEqual([expect.stringMatching(/^LOCK_BACKEND: redlock needs at least 3 .* name 1$/)]);
    expect(problems({ LOCK_BACKEND: 'redlock', REDLOCK_NODES: 'redis://b:6379/3,redis://c:6379/3' })).toEqual([]);
    expect(problems({ LOCK_BACKEND: 'redlock', REDLOCK_NODES: 'redis://b:6379/3,redis://c:6379/4' })).toEqual([expect.stringMatching(/^REDLOCK_NODES: .*same db index/)]);
    expect(problems({ LOCK_BACKEND: 'redlock', REDLOCK_NODES: 'b:6379,redis://c:6379/3' })).toEqual([expect.stringMatching(/^REDLOCK_NODES: not a redis:\/\/.*b:6379/)]);
    // REDIS_URL listed again is one node, not two.
    expect(problems({ LOCK_BACKEND: 'redlock', REDLOCK_NODES: 'redis://127.0.0.1:6379/3,redis://c:6379/3' })).toHaveLength(1);
    const cluster = envSchema.parse({ ...base, REDIS_CLUSTER_NODES: 'a:7000', REDLOCK_NODES: 'redis://b:6379/3,redis://c:6379/3' });
    expect(redlockNodes(cluster)).toEqual(['redis://b:6379/3', 'redis://c:6379/3']);
  });

  test('zookeeper needs a well-formed ZOOKEEPER_CONNECT (a chroot may follow)', () => {
    expect(problems({ LOCK_BACKEND: 'zookeeper' })).toEqual([expect.stringMatching(/^ZOOKEEPER_CONNECT: LOCK_BACKEND=zookeeper needs/)]);
    expect(problems({ LOCK_BACKEND: 'zookeeper', ZOOKEEPER_CONNECT: 'a:2181,b:2181,c:2181/hmdp' })).toEqual([]);
    expect(problems({ LOCK_BACKEND: 'zookeeper', ZOOKEEPER_CONNECT: 'a:2181,b' })).toEqual([expect.stringMatching(/^ZOOKEEPER_CONNECT: expected host:port/)]);
    // Settings of a backend not chosen are not checked.
    expect(problems({ ZOOKEEPER_CONNECT: 'nonsense' })).toEqual([]);
  });

  test('a process started with LOCK_BACKEND=zookeeper and no ensemble stops at once, naming the variable', () => {
    let stderr = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '-e', "await import('./lib/env.ts')"], {
        env: { ...process.env, LOCK_BACKEND: 'zookeeper', ZOOKEEPER_CONNECT: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 30_000,
      });
    } catch (e) {
      stderr = String((e as { stderr?: string }).stderr);
    }
    expect(stderr).toMatch(/Invalid environment:\n {2}ZOOKEEPER_CONNECT: LOCK_BACKEND=zookeeper needs the ensemble/);
  });
});
