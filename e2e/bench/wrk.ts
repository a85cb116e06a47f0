/**
 * wrk (C, epoll; Debian package `wrk`) as the bench's load generator: far less CPU per request
 * than a Node client on the same two cores. Runs e2e/bench/grab.lua (rotating Bearer tokens) and
 * reports, besides wrk's own figures, the generator's CPU time and its share of the machine's
 * CPU over the run (from `times` and /proc/stat), and where all of the machine's CPU went per
 * request, process by process (from /proc/<pid>/stat before and after).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';

export interface WrkOptions {
  url: string;
  tokens: string[];
  /** Per token (same index), a query string its requests add to the URL (`g=<grab token>` for a room sale). */
  queries?: string[];
  connections: number;
  durationS: number;
  /** Each token once; a run ends when every token has been answered (or at durationS). */
  once?: boolean;
  /** Each request's JSON body (none by default). */
  body?: string;
  /** `Connection: close` on every request: each one a new connection, to measure what a connection costs. */
  close?: boolean;
  /** Text every answer's body must hold; answers without it are counted under the status `unexpected`. */
  expect?: string;
  threads?: number;
  /** The server's processes (each with its descendants: cluster workers, nginx workers): their CPU per request is reported. */
  serverPids?: number[];
}

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  statuses: Record<string, number>;
  /** CPU seconds wrk used, and that as a share of all cores over the run. */
  generatorCpuS: number;
  generatorShare: number;
  /** Share of the machine's CPU that was busy over the run (everyone: server, Redis, broker, wrk, neighbours). */
  machineBusy: number;
  /**
   * CPU microseconds the server's processes used per request answered (NaN without serverPids):
   * what one request costs the server itself, far less sensitive to a busy machine than req/s.
   */
  serverCpuUsPerRequest: number;
  /**
   * CPU microseconds per request answered, by process name (every process on the machine, threads
   * included; a node process by its script), largest first, plus `kernel/other` for busy time no
   * process was charged with (interrupts), `steal` (the hypervisor ran someone else), `iowait`
   * (idle while a disk write was outstanding: fsyncs) and `idle`: where the machine's time went.
   */
  breakdown: [string, number][];
}

const LUA = path.join(import.meta.dirname, 'grab.lua');

type CpuTotals = { busy: number; total: number; iowait: number; steal: number };

function cpuTotals(): CpuTotals {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total, iowait: f[4] ?? 0, steal: f[7] ?? 0 };
}

/** A process's name and its CPU ticks (user + system: fields 14 and 15 of /proc/<pid>/stat); throws once it is gone. */
function readStat(pid: number): { comm: string; ticks: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ticks: Number(f[11]) + Number(f[12]) };
}

/** Each process of a tree (a pid and its descendants still running, Linux /proc), once. */
function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return; // gone meanwhile
    }
    for (const task of tasks) {
      try {
        for (const child of readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) visit(Number(child));
      } catch {
        /* this thread ended meanwhile: the others still name their children */
      }
    }
  };
  visit(pid);
  return out;
}

/** CPU seconds (user + system) of a process and all its descendants still running (Linux /proc). */
export function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      ticks += readStat(p).ticks;
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks / CLOCK_TICKS;
}

/**
 * How long the main thread of a process and of each of its descendants ran, and how long it waited
 * runnable for a core (the kernel's schedstat: on-CPU and run-queue time, ns), summed, in seconds.
 * On a machine the spike's own load generator keeps busy, the wait is the server's share of the
 * cores the generator took: a server that waited half the spike ran on half a core.
 */
export function treeRunQueue(pid: number): { ranS: number; waitedS: number } {
  let ran = 0;
  let waited = 0;
  let read = 0;
  for (const p of processTree(pid)) {
    try {
      const [onCpu, onQueue] = readFileSync(`/proc/${p}/task/${p}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
      if (Number.isFinite(onCpu) && Number.isFinite(onQueue)) {
        ran += onCpu!;
        waited += onQueue!;
        read++;
      }
    } catch {
      /* gone meanwhile, or no schedstat on this kernel */
    }
  }
  // Nothing read (no schedstat here): not a measured zero.
  return read === 0 ? { ranS: NaN, waitedS: NaN } : { ranS: ran / 1e9, waitedS: waited / 1e9 };
}

/** Ticks (user + system) of every process on the machine, keyed by pid, with a readable name. */
function processTicks(): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const { comm, ticks } = readStat(pid);
      out.set(pid, { name: comm.startsWith('node') || comm === 'MainThread' ? nodeName(pid, comm) : comm, ticks });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** A node process named by what it runs (web server, order worker, the bench itself). */
function nodeName(pid: number, comm: string): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const script = args.find((a) => /\.(ts|js|mjs)$/.test(a) && !a.includes('node_modules'));
    return script ? `node ${path.basename(script)}` : comm;
  } catch {
    return comm;
  }
}

/** Where the machine's CPU went between two snapshots (processes and /proc/stat), per request, by process name. */
function breakdownOf(procs: [ReturnType<typeof processTicks>, ReturnType<typeof processTicks>], cpu: [CpuTotals, CpuTotals], requests: number, generatorCpuS: number): [string, number][] {
  const [before, after] = procs;
  const busyTicks = cpu[1].busy - cpu[0].busy;
  const idleTicks = cpu[1].total - cpu[0].total - busyTicks;
  const iowaitTicks = cpu[1].iowait - cpu[0].iowait;
  const stealTicks = cpu[1].steal - cpu[0].steal;
  // wrk has exited by the second snapshot: its own CPU comes from `times`.
  const byName = new Map<string, number>([['wrk', generatorCpuS * CLOCK_TICKS]]);
  let charged = generatorCpuS * CLOCK_TICKS;
  for (const [pid, a] of after) {
    const d = a.ticks - (before.get(pid)?.ticks ?? 0);
    if (d <= 0) continue;
    charged += d;
    byName.set(a.name, (byName.get(a.name) ?? 0) + d);
  }
  // /proc/stat counts per CPU, a process's ticks are the same unit (USER_HZ).
  byName.set('kernel/other', Math.max(0, busyTicks - stealTicks - charged));
  byName.set('steal', stealTicks);
  byName.set('idle', idleTicks - iowaitTicks);
  byName.set('iowait', iowaitTicks);
  const us = (ticks: number) => Math.round(((ticks / CLOCK_TICKS) * 1e6) / Math.max(1, requests));
  return [...byName].map(([n, t]): [string, number] => [n, us(t)]).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]);
}

/** "web-server.ts 98 · beam.smp 40 · …" µs/request, the biggest first. */
export function formatBreakdown(b: [string, number][], top = 9): string {
  return b.slice(0, top).map(([n, v]) => `${n} ${v}`).join(' · ');
}

/** CPU seconds of several servers' process trees together; NaN for none. */
export function serversCpuSeconds(pids: number[] = []): number {
  return pids.length ? pids.reduce((sum, pid) => sum + treeCpuSeconds(pid), 0) : NaN;
}

/** USER_HZ: 100 on every Linux the bench runs on (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const threads = o.threads ?? Math.min(2, cpus().length);
  const file = path.join(tmpdir(), `hmdp-bench-tokens-${process.pid}.txt`);
  writeFileSync(file, o.tokens.map((t, i) => (o.queries?.[i] ? `${t} ${o.queries[i]}` : t)).join('\n') + '\n');
  const args = ['-t', String(threads), '-c', String(Math.max(o.connections, threads)), '-d', `${o.durationS}s`, '--timeout', '10s', '-s', LUA, o.url];
  const before = cpuTotals();
  const procsBefore = processTicks();
  const serverBefore = serversCpuSeconds(o.serverPids);
  const out = await new Promise<string>((resolve, reject) => {
    // `times` prints the CPU time of bash's children (wrk) after it exits; SIGINT to bash is
    // passed on to wrk, which then stops and prints its results.
    const script = 'wrk "$@" & p=$!; trap "kill -INT $p" INT; wait $p; wait $p; times';
    const child = spawn('bash', ['-c', script, 'wrk', ...args], {
      env: { ...process.env, HMDP_TOKENS: file, HMDP_THREADS: String(threads), HMDP_ONCE: o.once ? '1' : '0', HMDP_BODY: o.body ?? '', HMDP_CLOSE: o.close ? '1' : '0', HMDP_EXPECT: o.expect ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (b: Buffer) => (text += b.toString()));
    let done = 0;
    child.stderr.on('data', (b: Buffer) => {
      const t = b.toString();
      text += t;
      done += t.split('HMDP_THREAD_DONE').length - 1;
      if (o.once && done === threads) child.kill('SIGINT');
    });
    child.on('error', (err) => reject(new Error(`wrk could not start (${err.message}); install it: apt-get install wrk`)));
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}:\n${text}`))));
  });
  const after = cpuTotals();
  const procsAfter = processTicks();
  const serverCpuS = serversCpuSeconds(o.serverPids) - serverBefore;
  const json = /WRK_JSON (\{.*\})/.exec(out);
  if (!json) throw new Error(`no result from wrk:\n${out}`);
  const r = JSON.parse(json[1]!) as { requests: number; duration_us: number; p50_us: number; p99_us: number; max_us: number; errors: number; statuses: Record<string, number> };
  const times = out.trim().split('\n').slice(-1)[0]!.match(/(\d+)m([\d.]+)s/g) ?? [];
  const generatorCpuS = times.map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t)!; return Number(m[1]) * 60 + Number(m[2]); }).reduce((a, b) => a + b, 0);
  const durationS = r.duration_us / 1e6;
  const ticks = after.total - before.total;
  return {
    requests: r.requests,
    durationS,
    rps: r.requests / durationS,
    p50Ms: r.p50_us / 1000,
    p99Ms: r.p99_us / 1000,
    maxMs: r.max_us / 1000,
    errors: r.errors,
    statuses: r.statuses,
    generatorCpuS,
    generatorShare: generatorCpuS / (durationS * cpus().length),
    machineBusy: ticks > 0 ? (after.busy - before.busy) / ticks : 0,
    serverCpuUsPerRequest: (serverCpuS * 1e6) / r.requests,
    breakdown: breakdownOf([procsBefore, procsAfter], [before, after], r.requests, generatorCpuS),
  };
}
