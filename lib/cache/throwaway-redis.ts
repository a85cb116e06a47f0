/**
 * For fault tests: a real redis-server of our own on a spare port, so "Redis is down" can be a real
 * kill -9 without touching the shared server. Ports 6411-6419 are reserved for this.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface ThrowawayRedis {
  url: string;
  port: number;
  /** SIGKILL, then resolves once the process is gone. */
  kill(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not listen on ${port} in ${timeoutMs} ms`);
}

export async function startThrowawayRedis(ports = [6411, 6412, 6413, 6414, 6415, 6416, 6417, 6418, 6419]): Promise<ThrowawayRedis> {
  for (const port of ports) {
    if (!(await portFree(port))) continue;
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: 'ignore',
      // A test that switches AOF on (CONFIG SET) writes its files here, not into the repository.
      cwd: mkdtempSync(path.join(tmpdir(), 'hmdp-throwaway-redis-')),
    });
    await waitForPort(port, child);
    return {
      url: `redis://127.0.0.1:${port}/0`,
      port,
      kill: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    };
  }
  throw new Error(`no free port for a throwaway redis-server in ${ports.join(',')}`);
}
