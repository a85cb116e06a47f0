/** ioredis' error for a command that got no answer within commandTimeout (REDIS_COMMAND_TIMEOUT_MS). It may have run. */
export function isCommandTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Command timed out';
}
