/**
 * Runs `write` again when InnoDB chose it as a deadlock victim (or its lock wait timed out), after a
 * short random pause, up to `tries` times in all. Only for writes that are safe to run again from
 * the start: a whole transaction, or an idempotent statement.
 */
export async function retryDeadlock<T>(write: () => Promise<T>, tries = 6): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!isLockConflict(err) || attempt >= tries) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
    }
  }
}

/** A deadlock victim or a lock wait that timed out: nothing was written, the transaction may run again. */
export function isLockConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}
