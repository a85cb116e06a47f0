/**
 * Keeps a grant alive while its section runs (Redisson's WatchDog): renews every third of the
 * lease, so two renewals can fail before the lease ends. When the lock is known lost, or no
 * renewal has succeeded before the lease runs out, `onLost` fires once and renewals stop.
 */
export class LockLostError extends Error {
  constructor(readonly lockName: string, detail: string) {
    super(`lock "${lockName}" was lost: ${detail}`);
    this.name = 'LockLostError';
  }
}

export interface Watchdog {
  /** Stops renewing and waits for an in-flight renewal, so it cannot race the release. */
  stop(): Promise<void>;
}

export function startWatchdog(opts: {
  lockName: string;
  leaseMs: number;
  /** Until when the grant is known to be ours (its lease counted from when it was asked for). */
  validUntil: number;
  /** Resolves to the new validUntil, or null when the lock is known lost. */
  renew: () => Promise<number | null>;
  onLost: (err: LockLostError) => void;
}): Watchdog {
  const { lockName, leaseMs, renew, onLost } = opts;
  const period = Math.max(1, Math.floor(leaseMs / 3));
  let validUntil = opts.validUntil;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;

  const lose = (detail: string) => {
    stopped = true;
    onLost(new LockLostError(lockName, detail));
  };

  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      inFlight = tick();
    }, ms);
  };

  const tick = async () => {
    if (stopped) return;
    if (Date.now() >= validUntil) return lose('lease ran out before it could be renewed');
    let renewed: number | null;
    try {
      renewed = await renew();
    } catch (err) {
      // Redis unreachable: the lease may still be ours; retry until it would have run out.
      if (stopped) return;
      const left = validUntil - Date.now();
      if (left <= 0) return lose(`renewal failed (${(err as Error).message})`);
      return schedule(Math.min(period, left));
    }
    if (stopped) return;
    if (renewed === null) return lose('renewal refused: expired, taken over, or (multi-node) no majority of nodes');
    validUntil = renewed;
    schedule(period);
  };

  schedule(period);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
