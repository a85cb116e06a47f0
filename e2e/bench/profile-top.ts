/**
 * Reads a V8 CPU profile (`npm run bench -- grab --profile DIR` writes one per web process) and
 * prints where the samples went: the top functions by self time, and the same grouped by source
 * (this project's files, each npm package, node internals, GC, idle).
 *
 *   npx tsx e2e/bench/profile-top.ts DIR|FILE [--top 30] [--window FROM TO] [--timeline MS]
 *
 * `--window FROM TO` counts only the samples between those seconds of the profile (a phase of a
 * spike: its sale, or the sold-out answers after it). `--timeline MS` prints, per MS milliseconds,
 * how busy the process was and what share of that went to the kernel's write path, node:cluster's
 * hand-over of connections (the IPC write back to the primary, and taking the connection in),
 * HTTP parsing, route handlers, the Redis client and GC: where a spike's phases start and end, and
 * whether the process was saturated in them (an idle share means it waited on something else).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

const target = process.argv[2];
if (!target) {
  console.error('usage: profile-top.ts DIR|FILE [--top N]');
  process.exit(2);
}
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 30;
const windowIdx = process.argv.indexOf('--window');
const [from, to] = windowIdx > 0 ? [Number(process.argv[windowIdx + 1]), Number(process.argv[windowIdx + 2])] : [-Infinity, Infinity];
const timelineIdx = process.argv.indexOf('--timeline');
const timelineMs = timelineIdx > 0 ? Number(process.argv[timelineIdx + 1]) : 0;
if (!(from < to) || !(timelineMs >= 0)) {
  console.error('--window needs FROM < TO (seconds), --timeline a positive MS');
  process.exit(2);
}
// In a directory, the biggest profile is the busy web process (the cluster primary idles).
const file = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => path.join(target, f))
      .sort((a, b) => statSync(b).size - statSync(a).size)[0]
  : target;
if (!file) throw new Error(`no .cpuprofile in ${target}`);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of p.nodes as (Node & { children?: number[] })[]) for (const c of n.children ?? []) parentOf.set(c, n.id);
// A sample's time is the gap to the next one; its instant is the running sum of the deltas.
const at: number[] = [];
let clock = 0;
p.samples.forEach((_, i) => at.push((clock += p.timeDeltas[i] ?? 0) / 1e6));
const selfUs = new Map<number, number>();
p.samples.forEach((id, i) => {
  if (at[i]! >= from && at[i]! < to) selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
});

const source = (url: string, fn: string): string => {
  if (fn === '(garbage collector)' || fn === '(idle)' || fn === '(program)') return fn;
  if (!url) return '(native)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const local = /\/(lib|app|workers|e2e)\//.exec(url);
  return local ? url.slice(url.indexOf(local[0]) + 1) : url;
};

const fns = new Map<string, number>();
const sources = new Map<string, number>();
let total = 0;
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const { functionName, url, lineNumber } = n.callFrame;
  const src = source(url, functionName);
  const key = `${functionName || '(anonymous)'}  ${src}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  sources.set(src, (sources.get(src) ?? 0) + us);
  total += us;
}
const idle = sources.get('(idle)') ?? 0;
const busy = total - idle;
const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
console.log(`${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy)`);
console.log('\nby source:');
for (const [k, v] of [...sources].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${pct(v)}  ${k}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [k, v] of [...fns].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);

if (timelineMs > 0) {
  const groups: [string, (f: Node['callFrame']) => boolean][] = [
    ['write', (f) => f.functionName === 'writev' || f.functionName === 'writeBuffer'],
    ['cluster', (f) => f.functionName === 'target._send' || (f.functionName === 'onconnection' && f.url.includes('cluster'))],
    ['parse', (f) => f.functionName === 'parserOnHeadersComplete'],
    ['routes', (f) => /\/app\/api\//.test(f.url)],
    ['redis', (f) => f.url.includes('node_modules/ioredis')],
    ['gc', (f) => f.functionName === '(garbage collector)'],
  ];
  const memo = new Map<number, Set<string>>();
  const groupsOf = (id: number): Set<string> => {
    let g = memo.get(id);
    if (!g) {
      g = new Set();
      for (let cur: number | undefined = id; cur !== undefined; cur = parentOf.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        for (const [name, test] of groups) if (test(f)) g.add(name);
      }
      memo.set(id, g);
    }
    return g;
  };
  const rows: { all: number; busy: number; by: Map<string, number> }[] = [];
  p.samples.forEach((id, i) => {
    if (at[i]! < from || at[i]! >= to) return;
    const row = (rows[Math.floor((at[i]! * 1000) / timelineMs)] ??= { all: 0, busy: 0, by: new Map() });
    const us = p.timeDeltas[i + 1] ?? 0;
    row.all += us;
    const fn = byId.get(id)!.callFrame.functionName;
    if (fn === '(idle)' || fn === '(root)') return;
    row.busy += us;
    for (const g of groupsOf(id)) row.by.set(g, (row.by.get(g) ?? 0) + us);
  });
  console.log(`\ntimeline (${timelineMs} ms rows; busy % of the row, then each group's % of busy; rows under 5 % busy left out):`);
  console.log(`  ${'s'.padStart(6)}  ${'busy'.padStart(5)}  ${groups.map(([g]) => g.padStart(7)).join('')}`);
  rows.forEach((r, i) => {
    if (!r || r.busy < 0.05 * r.all) return;
    const share = (g: string) => `${(((r.by.get(g) ?? 0) / r.busy) * 100).toFixed(0)} %`.padStart(7);
    console.log(`  ${((i * timelineMs) / 1000).toFixed(2).padStart(6)}  ${`${((r.busy / r.all) * 100).toFixed(0)} %`.padStart(5)}  ${groups.map(([g]) => share(g)).join('')}`);
  });
}
