/**
 * The order worker yields the CPU to the grab path when both want it (WORKER_NICE, see
 * docs/flash-sale.md#worker-priority). A grab answers once its order is in RabbitMQ; the worker's
 * MySQL writes are the asynchronous half the queue exists for (削峰, peak shaving: the peak is
 * absorbed by the queue and written after). On a machine shared with the web processes, Redis and
 * the broker, a worker that competes as an equal takes the core a grab's next step was waiting for; a niced one runs in
 * what they leave, with bigger (cheaper per order) batches, and still gets its share when the web
 * side keeps the machine busy (at nice 10 about a tenth of a contended core, not nothing). On an
 * idle core nice changes nothing.
 *
 * Linux keeps a nice value per thread, and node's helper threads (the GC's, libuv's pool) already
 * run when this is called: every thread of the process is set, from /proc/self/task. Elsewhere,
 * where setpriority covers the whole process, pid 0 is.
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { log } from '@/lib/log';

/** Sets every thread of this process to `nice` (0 leaves the priority alone); returns how many were set. */
export function lowerOwnPriority(nice: number): number {
  if (nice <= 0) return 0;
  let tids: number[];
  try {
    tids = readdirSync('/proc/self/task').map(Number);
  } catch {
    tids = [0];
  }
  let set = 0;
  for (const tid of tids) {
    try {
      setPriority(tid, nice);
      set++;
    } catch (err) {
      // A thread that ended meanwhile, or a system that refuses: the worker runs as it is.
      log.debug({ tid, err: (err as Error).message }, 'worker priority not set for a thread');
    }
  }
  if (set === 0) log.warn({ nice }, 'worker priority could not be lowered; it competes with the web side as an equal');
  return set;
}
