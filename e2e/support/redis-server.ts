/**
 * The one way tests start a redis-server of their own: a real process on a spare loopback port,
 * so "Redis is down" or "node down" is a real SIGKILL without touching the shared server, and
 * command counts are not mixed with anyone else's traffic. Ports 6411-6419 by default; the lock
 * tests and the lock bench use 6391-6399 (LOCK_PORTS). A port already taken (another run) is
 * skipped. No persistence unless a test switches it on (CONFIG SET); its files go to `dir`, a
 * fresh temporary directory unless the caller names one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const DEFAULT_PORTS = [6411, 6412, 6413, 6414, 6415, 6416, 6417, 6418, 6419];
export const LOCK_PORTS = [6391, 6392, 6393, 6394, 6395, 6396, 6397, 6398, 6399];

export interface RedisServer {
  url: string;
  port: number;
  /** The server's working directory (where an AOF or RDB file would go). */
  dir: string;
  /** SIGKILL, then resolves once the process is gone. */
  kill(): Promise<void>;
}

const inUse = new Set<number>();
const children = new Set<ChildProcess>();
process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Resolves true once the port accepts connections, false if the child exits first. */
async function listening(port: number, child: ChildProcess, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not listen on ${port} in ${timeoutMs} ms`);
}

export async function startRedisServer(options: { ports?: number[]; dir?: string } = {}): Promise<RedisServer> {
  const ports = options.ports ?? DEFAULT_PORTS;
  for (const port of ports) {
    if (inUse.has(port) || !(await portFree(port))) continue;
    inUse.add(port);
    const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'hmdp-redis-server-'));
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: 'ignore',
      cwd: dir,
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('error', () => undefined);
    // Exiting before it listens means the port was taken meanwhile (or redis-server is broken:
    // then every port fails and the error below says so).
    if (!(await listening(port, child))) {
      inUse.delete(port);
      continue;
    }
    children.add(child);
    return {
      url: `redis://127.0.0.1:${port}/0`,
      port,
      dir,
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
        children.delete(child);
        inUse.delete(port);
      },
    };
  }
  throw new Error(`no free port for a test redis-server in ${ports.join(',')}`);
}
