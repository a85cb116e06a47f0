/** Which errors are "a dependency is down, retry" (503) rather than a bug (500). */
import { describe, expect, it } from 'vitest';
import { errorReply, isClientAbort, isDependencyDown } from '@/lib/http/respond';

const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

describe('isDependencyDown', () => {
  it('treats Redis Cluster failover replies as a dependency down: 503, no internals', () => {
    for (const m of ['MOVED 1282 127.0.0.1:7100', 'ASK 1282 127.0.0.1:7101', 'CLUSTERDOWN The cluster is down', 'TRYAGAIN Multiple keys request during rehashing of slot', 'Command aborted due to connection close']) {
      expect(isDependencyDown(replyError(m))).toBe(true);
    }
    const r = errorReply(replyError('MOVED 1282 127.0.0.1:7100'));
    expect(r.status).toBe(503);
    expect(JSON.stringify(r.body)).not.toContain('7100');
  });

  it('a lock service that cannot be asked (LOCK_BACKEND=zookeeper, no server serving) is a 503', async () => {
    const { LockUnavailableError } = await import('@/lib/lock/core');
    const r = errorReply(new LockUnavailableError('voucher-admin:1', 'connecting to ZooKeeper at 10.0.0.5:2181 took over 2000 ms'));
    expect(r.status).toBe(503);
    expect(JSON.stringify(r.body)).not.toContain('10.0.0.5');
  });

  it('keeps a plain bug a 500', () => {
    expect(isDependencyDown(new Error('a MOVED word inside is not a redirect'))).toBe(false);
    expect(errorReply(new TypeError('x is undefined')).status).toBe(500);
  });
});

describe('isClientAbort', () => {
  const reset = (message: string) => Object.assign(new Error(message), { code: 'ECONNRESET' });
  it("a client's abort is 4xx; a dependency's connection reset stays a 503", () => {
    expect(isClientAbort(reset('aborted'))).toBe(true);
    expect(errorReply(reset('aborted')).status).toBe(400);
    expect(errorReply(Object.assign(new Error('closed'), { name: 'ResponseAborted' })).status).toBe(400);
    expect(isClientAbort(reset('read ECONNRESET'))).toBe(false);
    expect(errorReply(reset('read ECONNRESET')).status).toBe(503);
    // Our own aborts (a lost lock's section) are not the client's.
    expect(isClientAbort(new DOMException('This operation was aborted', 'AbortError'))).toBe(false);
  });
});
