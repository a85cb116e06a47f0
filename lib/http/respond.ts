import { ZodError } from 'zod';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';

export function json(data: unknown, init: ResponseInit = {}): Response {
  return Response.json({ data }, init);
}

/**
 * A JSON answer before it becomes a Response: the hot server (lib/hot) writes it straight to the
 * socket, since building a web Response costs more than the rest of a refused grab.
 */
export interface Reply {
  status: number;
  body: unknown;
  /** Never mutated once in a Reply (the API's security headers are one shared object). */
  headers?: Readonly<Record<string, string>>;
}

export function toResponse(reply: Reply): Response {
  return Response.json(reply.body, { status: reply.status, headers: reply.headers });
}

type LogContext = Record<string, unknown> | (() => Record<string, unknown>);

/** `logContext` goes into the log line of a 5xx; pass a function when building it costs something. */
export function errorReply(err: unknown, logContext: LogContext = {}): Reply {
  if (err instanceof ZodError) {
    const fields: Record<string, string> = {};
    for (const issue of err.issues) {
      const key = issue.path.join('.') || '_';
      fields[key] ??= issue.message;
    }
    const first = Object.entries(fields)[0];
    const message = first ? (first[0] === '_' ? first[1] : `${first[0]}: ${first[1]}`) : '请求参数不合法';
    return { status: 400, body: { error: { code: 'VALIDATION', message, fields } } };
  }
  if (err instanceof AppError) {
    const headers: Record<string, string> = {};
    if (err.retryAfter !== undefined) headers['Retry-After'] = String(Math.max(1, Math.ceil(err.retryAfter)));
    const body: { code: string; message: string; fields?: Record<string, string> } = { code: err.code, message: err.message };
    if (err.fields) body.fields = err.fields;
    if (err.status >= 500) log.error({ ...contextOf(logContext), code: err.code, err: err.message }, 'request failed');
    return { status: err.status, body: { error: body }, headers };
  }
  // Before isDependencyDown: a client's abort arrives as ECONNRESET too, and is not our failure.
  if (isClientAbort(err)) {
    log.info({ ...contextOf(logContext), err: (err as Error).message }, 'client aborted the request');
    return { status: 400, body: { error: { code: 'BAD_REQUEST', message: '请求已中断' } } };
  }
  if (isDependencyDown(err)) {
    log.error({ ...contextOf(logContext), err: (err as Error).message }, 'dependency unavailable');
    return { status: 503, body: { error: { code: 'SERVICE_UNAVAILABLE', message: '服务繁忙，请稍后再试' } }, headers: { 'Retry-After': '2' } };
  }
  log.error({ ...contextOf(logContext), err }, 'unhandled error');
  return { status: 500, body: { error: { code: 'INTERNAL', message: '服务器开小差了，请稍后再试' } } };
}

function contextOf(logContext: LogContext): Record<string, unknown> {
  return typeof logContext === 'function' ? logContext() : logContext;
}

/**
 * The client went away while its request was read: node's request stream fails with "aborted"
 * (code ECONNRESET — a dependency's reset says "read ECONNRESET" instead), or the request's
 * signal aborted the read. An AbortError of our own (a lost lock's section) is not one of these.
 * The answer (400) reaches nobody; what matters is the log level.
 */
export function isClientAbort(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    (err.message === 'aborted' && code === 'ECONNRESET') ||
    // Next's reason when the response closed unfinished (its request signal aborts with it).
    err.name === 'ResponseAborted'
  );
}

const DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR']);

/** Redis, MySQL or the broker is unreachable: the client should retry (503), it did nothing wrong. */
export function isDependencyDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    // lib/lock: the lock's service (a ZooKeeper ensemble) could not be asked.
    err.name === 'LockUnavailableError' ||
    (typeof code === 'string' && DOWN_CODES.has(code)) ||
    /Connection is closed|Stream isn't writeable|^Command timed out$|connect ECONNREFUSED|Command aborted due to connection close/.test(err.message) ||
    // Redis Cluster mid-failover: the slot's master is dead and its replica not yet promoted. A
    // MOVED/ASK that reaches us is a redirect ioredis gave up on (e.g. a pipeline's, to the dead
    // master a stale node still names): seen as 500s in e2e/faults/failover.ts before this.
    /Too many Cluster redirections|CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|None of startup nodes|^(MOVED|ASK) \d+ /.test(err.message)
  );
}
