/**
 * What every kind of lock shares: reentrancy by async call chain, the watchdog, the abort signal
 * and the fence handed to the section. A backend (single Redis, or many nodes) only knows how to
 * take, renew and give back a grant.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { log } from '@/lib/log';
import { LockLostError, startWatchdog } from '@/lib/lock/watchdog';

export { LockLostError };

export class LockTimeoutError extends Error {
  constructor(readonly lockName: string, readonly waitedMs: number) {
    // For a multi-node lock "not granted" may also mean no majority of the nodes answered.
    super(`lock "${lockName}" not granted within ${waitedMs} ms`);
    this.name = 'LockTimeoutError';
  }
}

/** The lock's service could not be asked (no ZooKeeper server serving): a dependency down (503), not "busy". */
export class LockUnavailableError extends Error {
  constructor(readonly lockName: string, detail: string) {
    super(`lock "${lockName}" unavailable: ${detail}`);
    this.name = 'LockUnavailableError';
  }
}

export interface LockOptions {
  /** How long a grant lives without renewal; the watchdog renews it every third (default 10 000 ms). */
  leaseMs?: number;
  /** How long to wait for a busy lock (default 0 = try once). */
  waitMs?: number;
}

export type Section<T> = (signal: AbortSignal, fence: number) => Promise<T>;

/** One grant of a lock to one holder. */
export interface Grant {
  readonly fence: number;
  /** Until when (epoch ms) the grant is known to be ours: the lease counted from when the winning try was sent. */
  readonly validUntil: number;
  /** Renews the lease; resolves to the new validUntil, or null when the grant turned out lost. */
  renew(): Promise<number | null>;
  release(): Promise<void>;
  /** For backends that learn of a loss by push (ZooKeeper session expiry): calls `lost` once when it happens. */
  onLost?(lost: (detail: string) => void): void;
}

export interface LockBackend {
  /** Tells backends apart in the reentrancy map (a single-node and a multi-node lock never nest). */
  readonly id: string;
  /** Resolves to the grant, or null when the lock stayed busy (or the nodes refused) for waitMs. */
  acquire(name: string, leaseMs: number, waitMs: number): Promise<Grant | null>;
  /** Takes a grant the current call chain already holds once more; null when it turned out lost. */
  reenter(name: string, grant: Grant, leaseMs: number): Promise<(() => Promise<void>) | null>;
}

interface Held {
  grant: Grant;
  signal: AbortSignal;
  /** False once the section that took the grant has ended (a leaked child task must not re-enter it). */
  active: boolean;
}

const heldByChain = new AsyncLocalStorage<Map<string, Held>>();

const DEFAULT_LEASE_MS = 10_000;

function lease(opts: LockOptions): number {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isInteger(leaseMs) || leaseMs < 30) throw new Error(`leaseMs must be an integer >= 30, got ${leaseMs}`);
  return leaseMs;
}

/** Runs `section` holding `name`, or resolves `{ acquired: false }` if it was not granted in time. */
export async function tryRunLocked<T>(
  backend: LockBackend,
  name: string,
  opts: LockOptions,
  section: Section<T>,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  const leaseMs = lease(opts);
  const waitMs = Math.max(0, opts.waitMs ?? 0);
  const chainKey = `${backend.id}\u0000${name}`;

  const outer = heldByChain.getStore()?.get(chainKey);
  if (outer?.active) {
    if (outer.signal.aborted) throw outer.signal.reason;
    const exit = await backend.reenter(name, outer.grant, leaseMs);
    if (!exit) throw outer.signal.aborted ? outer.signal.reason : new LockLostError(name, 'lost before re-entry');
    try {
      return { acquired: true, value: await section(outer.signal, outer.grant.fence) };
    } finally {
      await exit().catch((err) => log.warn({ lock: name, err: (err as Error).message }, 'lock re-entry release failed'));
    }
  }

  const grant = await backend.acquire(name, leaseMs, waitMs);
  if (!grant) return { acquired: false };

  const controller = new AbortController();
  const watchdog = startWatchdog({
    lockName: name,
    leaseMs,
    validUntil: grant.validUntil,
    renew: () => grant.renew(),
    onLost: (err) => {
      log.warn({ lock: name, fence: grant.fence }, err.message);
      controller.abort(err);
    },
  });
  grant.onLost?.((detail) => {
    if (controller.signal.aborted) return;
    log.warn({ lock: name, fence: grant.fence }, detail);
    controller.abort(new LockLostError(name, detail));
  });
  const held: Held = { grant, signal: controller.signal, active: true };
  const chain = new Map(heldByChain.getStore());
  chain.set(chainKey, held);
  try {
    return { acquired: true, value: await heldByChain.run(chain, () => section(controller.signal, grant.fence)) };
  } finally {
    held.active = false;
    await watchdog.stop();
    // A failed release is not the section's failure: the lease frees the lock anyway.
    await grant.release().catch((err) => log.warn({ lock: name, err: (err as Error).message }, 'lock release failed'));
  }
}

export async function runLocked<T>(backend: LockBackend, name: string, opts: LockOptions, section: Section<T>): Promise<T> {
  const r = await tryRunLocked(backend, name, opts, section);
  if (!r.acquired) throw new LockTimeoutError(name, Math.max(0, opts.waitMs ?? 0));
  return r.value;
}
