/**
 * What every bench scenario needs: its own web server(s) and worker(s) (workers/web-server.ts and
 * `workers/background.ts`, on the bench database / Redis db / queue prefix the runner set in
 * process.env), users logged in through the real SMS login, an autocannon storm with a progress
 * line, and cleanup of everything it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import type { RedisClient } from '@/lib/redis/types';
import { keys } from '@/lib/redis/keys';
import { frontConfig } from './front';
import { closedLoop, openLoop, type StormOptions, type StormResult } from './load';

const ROOT = process.cwd();

export interface Proc {
  name: string;
  child: ChildProcess;
  /** The last lines it wrote, for error messages. */
  tail: string[];
}

export class Harness {
  private readonly procs = new Set<Proc>();

  constructor(readonly quiet: boolean) {}

  log(line: string): void {
    if (!this.quiet) process.stderr.write(`${line}\n`);
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    // Every load generator here connects from 127.0.0.1 (a spike opens thousands of connections at
    // once): the per-client connection cap would refuse the bench itself.
    return { ...process.env, NODE_ENV: 'production', RATE_LIMITS: 'false', ALLOW_DEV_SMS_IN_PRODUCTION: 'true', LOG_LEVEL: 'warn', WEB_MAX_CONNECTIONS_PER_CLIENT: '0', ...extra };
  }

  private spawnProc(name: string, args: string[], env: NodeJS.ProcessEnv, command = process.execPath): Proc {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const p: Proc = { name, child, tail: [] };
    const keep = (buf: Buffer) => {
      p.tail.push(...buf.toString().split('\n').filter(Boolean));
      if (p.tail.length > 30) p.tail.splice(0, p.tail.length - 30);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.procs.add(p);
    child.on('exit', () => this.procs.delete(p));
    return p;
  }

  async ensureBuild(force: boolean): Promise<void> {
    if (!force && existsSync(path.join(ROOT, '.next', 'BUILD_ID'))) return;
    this.log('… next build (once; --build forces a fresh one)');
    const p = this.spawnProc('build', [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'build'], { ...process.env, NODE_ENV: 'production' });
    const code = await new Promise<number | null>((r) => p.child.on('exit', r));
    if (code !== 0) throw new Error(`next build failed:\n${p.tail.join('\n')}`);
  }

  /**
   * Environment that preloads bench-only hooks (e2e/bench/hooks/<name>.mjs) into a server and every
   * process it forks: how the bench turns on what the product has no setting for.
   */
  hooks(...names: string[]): Record<string, string> {
    const imports = names.map((n) => `--import ${path.join(ROOT, 'e2e/bench/hooks', `${n}.mjs`)}`);
    return { NODE_OPTIONS: [process.env.NODE_OPTIONS ?? '', ...imports].join(' ').trim() };
  }

  /** The product's web server (workers/web-server.ts) on a free port; resolves once /api/health answers. `nodeArgs` reach every web process (cluster workers inherit them). */
  async startWeb(extra: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ url: string; proc: Proc }> {
    const port = await freePort();
    const proc = this.spawnProc(`web:${port}`, [...nodeArgs, '--import', 'tsx', 'workers/web-server.ts'], this.env({ PORT: String(port), ...extra }));
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(`web server on ${port}`, proc, async () => (await fetch(`${url}/api/health`).catch(() => null))?.ok === true, 60_000);
    return { url, proc };
  }

  /** Plain `next start` (Next's own server, no hot server in front) on a free port: the "before" of the shop scenario. */
  async startNextStart(extra: Record<string, string> = {}): Promise<{ url: string; proc: Proc }> {
    const port = await freePort();
    const proc = this.spawnProc(`next-start:${port}`, [path.join(ROOT, 'node_modules/next/dist/bin/next'), 'start', '-p', String(port), '-H', '127.0.0.1'], this.env({ PORT: String(port), ...extra }));
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(`next start on ${port}`, proc, async () => (await fetch(`${url}/api/health`).catch(() => null))?.ok === true, 60_000);
    return { url, proc };
  }

  /**
   * Shape (b)'s front (e2e/bench/front.ts): nginx on a free port, the hot routes to `hotPort`, the
   * rest to `nextPort`, with `workers` nginx worker processes. Resolves once the health check
   * answers through it.
   */
  async startFront(hotPort: number, nextPort: number, workers: number): Promise<{ url: string; proc: Proc }> {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), 'hmdp-front-'));
    writeFileSync(path.join(dir, 'nginx.conf'), frontConfig({ dir, port, hotPort, nextPort, workers }));
    const proc = this.spawnProc(`front:${port}`, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], process.env, existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(`nginx front on ${port}`, proc, async () => (await fetch(`${url}/api/health`).catch(() => null))?.ok === true, 30_000);
    return { url, proc };
  }

  /** The ceiling (e2e/bench/ceiling-server.ts: bare node:http, constant JSON) in `processes` processes. */
  async startCeiling(processes: number, extra: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ url: string; proc: Proc }> {
    const port = await freePort();
    const proc = this.spawnProc(`ceiling:${port}`, [...nodeArgs, '--import', 'tsx', 'e2e/bench/ceiling-server.ts', String(port), String(processes)], this.env(extra));
    await waitUntil(`ceiling on ${port}`, proc, async () => proc.tail.some((l) => l.includes('ceiling ready')), 30_000);
    return { url: `http://127.0.0.1:${port}`, proc };
  }

  /** n order workers; resolves once each is consuming. */
  async startWorkers(n: number, extra: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Proc[]> {
    const procs = Array.from({ length: n }, (_, i) => this.spawnProc(`worker${i + 1}`, [...nodeArgs, '--import', 'tsx', 'workers/background.ts'], this.env({ LOG_LEVEL: 'info', ...extra })));
    await Promise.all(procs.map((p) => waitUntil(`${p.name} consuming`, p, async () => p.tail.some((l) => l.includes('order worker consuming')), 60_000)));
    return procs;
  }

  async stop(p: Proc): Promise<void> {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return;
    const exited = new Promise((r) => p.child.once('exit', r));
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.procs].map((p) => this.stop(p)));
  }

  /** n consumers through the real SMS login (send code → read the dev SMS outbox → log in). */
  async loginUsers(url: string, redis: RedisClient, n: number, concurrency = 32): Promise<string[]> {
    const start = randomInt(0, 999_999_999 - n);
    const phones = Array.from({ length: n }, (_, i) => `16${String(start + i).padStart(9, '0')}`);
    const tokens: string[] = new Array(n);
    let next = 0;
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as { data?: { token?: string }; error?: { message: string } };
      if (!res.ok) throw new Error(`${p}: ${res.status} ${json.error?.message}`);
      return json.data;
    };
    const line = this.progress('login');
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < n; i = next++) {
          await post('/api/user/code', { phone: phones[i] });
          const code = await redis.get(keys.devSms(phones[i]!));
          tokens[i] = (await post('/api/user/login', { phone: phones[i], code }))!.token!;
          if (i % 50 === 0) line(`${Math.min(next, n)}/${n} users`);
        }
      }),
    );
    line(`${n}/${n} users`, true);
    return tokens;
  }

  /** A progress line (rewritten in place on a terminal, one line per update elsewhere). */
  progress(label: string): (text: string, final?: boolean) => void {
    let last = 0;
    return (text, final = false) => {
      if (this.quiet) return;
      const now = Date.now();
      if (!final && now - last < 1000) return;
      last = now;
      if (process.stderr.isTTY) process.stderr.write(`\r\x1b[2K${label}: ${text}${final ? '\n' : ''}`);
      else process.stderr.write(`${label}: ${text}\n`);
    };
  }

  /** Closed loop (autocannon, C connections as fast as they go), or open loop at o.rate. */
  storm(o: StormOptions): Promise<StormResult> {
    const line = this.progress(o.label);
    return o.rate ? openLoop({ ...o, rate: o.rate }, line) : closedLoop(o, line);
  }
}

async function waitUntil(what: string, proc: Proc, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited (${proc.child.exitCode}) before ${what}:\n${proc.tail.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${proc.tail.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
