/**
 * Reopens a broker session after it is lost, with backoff (500 ms doubling to 5 s, back to
 * 500 ms once a session opens): the order worker and the payment-timeout consumer both keep a
 * long-lived consumer this way. At most one attempt is pending at a time; nothing after stop().
 */
import { log } from '@/lib/log';

export interface Reconnector {
  /** Try again later (no-op while an attempt is already scheduled, or after stop()). */
  schedule(): void;
  /** A session opened: the next loss starts from the shortest delay again. */
  opened(): void;
  stop(): void;
}

export function createReconnector(open: () => Promise<void>, what: string): Reconnector {
  const FIRST_MS = 500;
  const MAX_MS = 5000;
  let delay = FIRST_MS;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const r: Reconnector = {
    schedule() {
      if (stopped || timer) return;
      const wait = delay;
      delay = Math.min(delay * 2, MAX_MS);
      timer = setTimeout(() => {
        timer = undefined;
        open().catch((err: Error) => {
          log.warn({ err: err.message, retryInMs: delay }, `${what}: broker still unavailable`);
          r.schedule();
        });
      }, wait);
    },
    opened() {
      delay = FIRST_MS;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
  return r;
}
