import pino from 'pino';
import { env } from '@/lib/env';

/** Structured JSON logs (pretty printing is a pipe away: `| npx pino-pretty`). */
export const log = pino({
  level: env.LOG_LEVEL,
  base: { pid: process.pid },
  redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.code', '*.token'],
});
