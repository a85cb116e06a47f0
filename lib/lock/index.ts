/**
 * Distributed lock over the shared Redis (first version: SET NX PX + owner token, Lua
 * compare-and-delete release). The API below is the agreed contract; the internals harden later.
 */
import { randomBytes } from 'node:crypto';
import { redis } from '@/lib/redis/client';
import { keys } from '@/lib/redis/keys';
import { runScript } from '@/lib/redis/scripts';

export class LockTimeoutError extends Error {
  constructor(readonly lockName: string, waitedMs: number) {
    super(`lock "${lockName}" still busy after ${waitedMs} ms`);
    this.name = 'LockTimeoutError';
  }
}

export interface LockOptions {
  /** How long a grant lives without renewal (default 10 000 ms). */
  leaseMs?: number;
  /** How long to wait for a busy lock (default 0 = try once). */
  waitMs?: number;
}

const DEFAULT_LEASE_MS = 10_000;

async function acquire(name: string, token: string, leaseMs: number): Promise<number> {
  return runScript<number>(redis, 'lock-acquire', [keys.lock(name), keys.lockFence(name)], [token, leaseMs]);
}

async function release(name: string, token: string): Promise<void> {
  await runScript(redis, 'lock-release', [keys.lock(name)], [token]);
}

async function run<T>(name: string, token: string, fence: number, fn: (signal: AbortSignal, fence: number) => Promise<T>): Promise<T> {
  const ctl = new AbortController();
  try {
    return await fn(ctl.signal, fence);
  } finally {
    await release(name, token);
  }
}

export async function withLock<T>(name: string, opts: LockOptions, fn: (signal: AbortSignal, fence: number) => Promise<T>): Promise<T> {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const waitMs = opts.waitMs ?? 0;
  const token = randomBytes(16).toString('hex');
  const deadline = Date.now() + waitMs;
  for (;;) {
    const r = await acquire(name, token, leaseMs);
    if (r > 0) return run(name, token, r, fn);
    const left = deadline - Date.now();
    if (left <= 0) throw new LockTimeoutError(name, waitMs);
    await new Promise((res) => setTimeout(res, Math.min(left, Math.max(-r, 20), 50)));
  }
}

export async function tryWithLock<T>(
  name: string,
  opts: Omit<LockOptions, 'waitMs'>,
  fn: (signal: AbortSignal, fence: number) => Promise<T>,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  try {
    return { acquired: true, value: await withLock(name, { ...opts, waitMs: 0 }, fn) };
  } catch (err) {
    if (err instanceof LockTimeoutError) return { acquired: false };
    throw err;
  }
}
