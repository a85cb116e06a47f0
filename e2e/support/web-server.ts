/**
 * The real web server (workers/web-server.ts: the hot server with Next behind it, after
 * `npx next build`) in a process group of its own, for tests that need Next's own answers on a
 * raw socket, or several web processes. One process by default, loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts it on `port` and resolves once /api/health on that port answers 200 (90 s at most).
 * `env` overrides (e.g. WEB_CONCURRENCY for several web processes, WEB_PART=hot for the hot routes
 * without Next, which needs no build).
 */
export async function startWebServer(port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const web = spawn(process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WEB_CONCURRENCY: '1', LOG_LEVEL: 'error', ...env },
    stdio: 'ignore',
    detached: true,
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (web.exitCode !== null) throw new Error(`web server exited (${web.exitCode}) before answering on ${port}`);
    const up = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false);
    if (up) return web;
    if (Date.now() > deadline) throw new Error('web server did not start');
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Stops it and its cluster worker (the whole group). */
export function stopWebServer(web: ChildProcess | undefined): void {
  if (web?.pid) process.kill(-web.pid, 'SIGTERM');
}

export interface WatchedWebServer {
  web: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
}

/**
 * Starts it with `env` (PORT and HOST included: nothing is assumed) without waiting, in a group of
 * its own, its output kept: for tests of the server's own life (ready line, stop, restarts).
 */
export function spawnWebServer(env: Record<string, string>): WatchedWebServer {
  const web = spawn(process.execPath, ['--import', 'tsx', 'workers/web-server.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  web.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  web.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => web.once('exit', (code) => r(code)));
  return { web, output: () => out, exited };
}
