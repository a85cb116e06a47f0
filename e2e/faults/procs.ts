/** Process plumbing for the fault suite: spawn with a log file, wait for a port, kill for real. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const ROOT = process.cwd();
export const RUN_DIR = path.join(ROOT, '.run', 'faults');
mkdirSync(RUN_DIR, { recursive: true });

export interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

export function start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const log = createWriteStream(path.join(RUN_DIR, `${name}.log`), { flags: 'a' });
  // Own process group, so a kill reaches wrappers' children too (npx → node, rabbitmq-server → beam).
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { name, child, exited };
}

export async function kill(p: Proc, signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 12_000): Promise<void> {
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-p.child.pid!, sig);
    } catch {
      /* already gone */
    }
  };
  if (p.child.exitCode === null && p.child.signalCode === null) {
    group(signal);
    const t = setTimeout(() => group('SIGKILL'), timeoutMs);
    await p.exited;
    clearTimeout(t);
  }
  group('SIGKILL'); // stragglers left in the group (e.g. beam behind a dead wrapper)
}

export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000, everyMs = 200): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await check().catch(() => false)) return Date.now() - t0;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitHttp(url: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(url, async () => (await fetch(url)).ok, timeoutMs);
}

/**
 * The private services' ports: the defaults, or, with FAULT_PORT_BASE=B (e.g. 3650), B + offset
 * for MariaDB, the next ones for Redis and the web instances, and B + 2000 + offset for RabbitMQ
 * (its dist port + 20000), so two runs on one machine (a CI run, an engineer's) never collide.
 */
export function faultPorts(offset: number, d: { mysql: number; redis: number; rabbit: number; webs: number[] }) {
  const base = Number(process.env.FAULT_PORT_BASE ?? 0);
  if (!base) return { ...d, rabbitDist: d.rabbit + 20000 };
  const b = base + offset;
  return { mysql: b, redis: b + 1, webs: d.webs.map((_, i) => b + 2 + i), rabbit: b + 2000, rabbitDist: b + 22000 };
}

/**
 * Runs a fault script's main and exits with its code (1 if it threw), after `cleanup` (stopping the
 * script's private services) has run either way: a failed run must not leave a MariaDB or a broker
 * of its own behind on the ports the next run takes.
 */
export function runToExit(main: () => Promise<number>, cleanup: () => Promise<unknown> | void): void {
  main()
    .catch((e) => {
      console.error(e);
      return 1;
    })
    .then(async (code) => {
      await Promise.resolve().then(cleanup).catch((e) => console.error('cleanup:', e));
      process.exit(code);
    });
}
