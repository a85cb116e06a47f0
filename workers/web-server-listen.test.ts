/**
 * The web server (workers/web-server.ts, hot-only so no Next build is needed) started on a port
 * another process holds: it stops at once, non-zero, naming the address and the error. The web
 * process had no 'error' listener on its server, so the failed listen threw out of it, and the
 * primary started another copy every 500 ms for ever: never ready, never exiting.
 */
import { spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';

const holder = net.createServer();
afterAll(() => new Promise<void>((r) => holder.close(() => r())));

describe('web server on a port already taken', () => {
  it('exits non-zero within seconds, saying why, and starts no other copy', { timeout: 60_000 }, async () => {
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as AddressInfo).port;
    const web = spawn(process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '2', WEB_PART: 'hot', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    web.stdout.on('data', (d: Buffer) => (out += d.toString()));
    web.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => web.once('exit', (code) => r(code)));
    try {
      const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 30_000))]);
      expect(code, out.slice(-2000)).toBe(1);
      expect(out).toContain(`web server cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(out).not.toContain('starting another');
      expect(out).not.toContain('web server ready');
    } finally {
      if (web.exitCode === null) process.kill(-web.pid!, 'SIGKILL');
    }
  });
});
