/**
 * The web server (workers/web-server.ts, hot-only so no Next build is needed) started on a port
 * another process holds: it stops at once, non-zero, naming the address and the error. The web
 * process had no 'error' listener on its server, so the failed listen threw out of it, and the
 * primary started another copy every 500 ms for ever: never ready, never exiting.
 */
import net, { type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnWebServer } from '@/e2e/support/web-server';

const holder = net.createServer();
afterAll(() => new Promise<void>((r) => holder.close(() => r())));

describe('web server on a port already taken', () => {
  it('exits non-zero within seconds, saying why, and starts no other copy', { timeout: 60_000 }, async () => {
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as AddressInfo).port;
    const { web, output, exited } = spawnWebServer({ PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '2', WEB_PART: 'hot', LOG_LEVEL: 'info' });
    try {
      const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 30_000))]);
      expect(code, output().slice(-2000)).toBe(1);
      expect(output()).toContain(`web server cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(output()).not.toContain('starting another');
      expect(output()).not.toContain('web server ready');
    } finally {
      if (web.exitCode === null) process.kill(-web.pid!, 'SIGKILL');
    }
  });
});
