/**
 * Reads a V8 CPU profile (`npm run bench -- grab --profile DIR` writes one per web process) and
 * prints where the samples went: the top functions by self time, and the same grouped by source
 * (this project's files, each npm package, node internals, GC, idle).
 *
 *   npx tsx e2e/bench/profile-top.ts DIR|FILE [--top 30]
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
}

const target = process.argv[2];
if (!target) {
  console.error('usage: profile-top.ts DIR|FILE [--top N]');
  process.exit(2);
}
const topIdx = process.argv.indexOf('--top');
const top = topIdx > 0 ? Number(process.argv[topIdx + 1]) : 30;
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
const selfUs = new Map<number, number>();
p.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));

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
