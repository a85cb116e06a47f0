/**
 * Test support: throwaway redis-server processes on the locks tests' spare ports (6391-6399), so
 * "node down" is a real killed process and command counts are not mixed with anyone else's
 * traffic. A port already taken (another run) is skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const PORTS = [6391, 6392, 6393, 6394, 6395, 6396, 6397, 6398, 6399];
const inUse = new Set<number>();
const children = new Set<ChildProcess>();
process.once('exit', () => children.forEach((c) => c.kill('SIGKILL')));

export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

function startOn(port: number): Promise<RedisServer | null> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Ready to accept connections')) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        children.add(child);
        resolve({
          port,
          url: `redis://127.0.0.1:${port}/0`,
          async kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
            await exited;
            children.delete(child);
            inUse.delete(port);
          },
        });
      }
    });
    // Exiting before "ready" means the port is taken (or redis-server is broken: then every port fails).
    void exited.then(() => resolve(null));
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  for (const port of PORTS) {
    if (inUse.has(port)) continue;
    inUse.add(port);
    const server = await startOn(port);
    if (server) return server;
    inUse.delete(port);
  }
  throw new Error(`no free port for a test redis-server in ${PORTS[0]}-${PORTS.at(-1)}`);
}
