/**
 * npm run bench — the load harness. Starts its own web server(s) and order worker(s) on a bench
 * database / Redis db / queue prefix, runs one scenario (a file under e2e/bench/scenarios/),
 * verifies the outcome, stops everything.
 *
 *   npm run bench                                   seckill storm, strategy redis
 *   npm run bench -- shop                           cached shop detail vs a constant route
 *   npm run bench -- --strategy db                  the grab as one synchronous MySQL transaction
 *   npm run bench -- --compare                      both, with ratios
 *   npm run bench -- --rate 500 --duration 20       fixed offered rate (open loop)
 *   npm run bench -- --scenario drain --messages 50000 --workers 1
 *   npm run bench -- --json                         one JSON line per run
 *   npm run bench -- --scenario locks               one contended lock: Redis, Redlock ×3, ZooKeeper
 *
 * Options: --users U (1000) --stock S (100) --connections C (50) --duration D s (10) --rate R
 * --workers W (1) --messages N (50000) --batch B --prefetch P --warmup seconds (3, seckill scenario)
 * --build (rebuild .next first), --no-docs (leave docs/benchmarks.md alone: a verified run rewrites
 * its rows there, e2e/bench/docs-table.ts).
 * Env: BENCH_DATABASE_URL, BENCH_REDIS_URL, BENCH_MQ_PREFIX override the bench's own services.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { writeBenchRows } from './docs-table';
import type { BenchArgs, RunResult, Scenario } from './types';

function parseArgs(argv: string[]): { flags: Record<string, string>; bools: Set<string> } {
  const flags: Record<string, string> = {};
  const bools = new Set<string>();
  // `npm run bench -- shop` is short for `--scenario shop`.
  if (argv[0] && !argv[0].startsWith('--')) argv = ['--scenario', ...argv];
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(argv[i]!);
    if (!m) throw new Error(`unexpected argument ${argv[i]}`);
    const next = argv[i + 1];
    if (m[2] !== undefined) flags[m[1]!] = m[2];
    else if (next !== undefined && !next.startsWith('--')) flags[m[1]!] = (i++, next);
    else bools.add(m[1]!);
  }
  return { flags, bools };
}

const num = (v: string | undefined, def: number, name: string): number => {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};

const { flags, bools } = parseArgs(process.argv.slice(2));
const scenarioName = flags.scenario ?? 'seckill';
const scenarioFiles = readdirSync(path.join(import.meta.dirname, 'scenarios')).map((f) => f.replace(/\.ts$/, ''));
if (!scenarioFiles.includes(scenarioName)) {
  console.error(`unknown scenario "${scenarioName}" (have: ${scenarioFiles.join(', ')})`);
  process.exit(2);
}

// The bench's own services, set before anything reads lib/env (hence the dynamic imports below).
process.env.DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/hmdp_bench';
process.env.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/9';
process.env.MQ_PREFIX = process.env.BENCH_MQ_PREFIX ?? 'hmdp_bench';
process.env.AUTH_SECRET ??= 'bench-secret-0123456789abcdef0123456789abcdef';
process.env.LOG_LEVEL ??= 'warn';
if (flags.batch) process.env.WORKER_BATCH_SIZE = flags.batch;
if (flags.prefetch) process.env.WORKER_PREFETCH = flags.prefetch;

const args: BenchArgs = {
  scenario: scenarioName,
  json: bools.has('json'),
  compare: bools.has('compare'),
  users: num(flags.users, 1000, 'users'),
  stock: num(flags.stock, 100, 'stock'),
  connections: num(flags.connections, 50, 'connections'),
  duration: num(flags.duration, 10, 'duration'),
  rate: flags.rate === undefined ? undefined : num(flags.rate, 0, 'rate'),
  workers: num(flags.workers, 1, 'workers'),
  messages: num(flags.messages, 50_000, 'messages'),
  extra: flags,
};

const { Harness } = await import('./harness');
const { scenario } = (await import(`./scenarios/${scenarioName}.ts`)) as { scenario: Scenario };
const { closeDb } = await import('@/lib/db/client');
const { closeRedis } = await import('@/lib/redis/client');
const { closeMq } = await import('@/lib/mq/connection');

const variants = args.compare ? scenario.variants : [flags.strategy ?? scenario.variants[0]!];
for (const v of variants) {
  if (!scenario.variants.includes(v)) {
    console.error(`scenario ${scenarioName} has no strategy "${v}" (have: ${scenario.variants.join(', ')})`);
    process.exit(2);
  }
}

const h = new Harness(args.json);
const stop = () => void h.stopAll().finally(() => process.exit(130));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

let exitCode = 0;
try {
  if (scenario.needsBuild !== false) await h.ensureBuild(bools.has('build'));
  h.log(`▶ bench ${scenarioName}: ${scenario.description}`);
  const results: [string, RunResult][] = [];
  for (const v of variants) {
    const r = await scenario.run(h, args, v);
    results.push([v, r]);
    if (args.json) console.log(JSON.stringify(r.line));
    else console.log(r.summary.join('\n'));
    if (r.failures.length) {
      exitCode = 1;
      console.error(`✗ ${v}: ${r.failures.join('; ')}`);
    }
  }
  if (results.length > 1) {
    const [baseName, base] = results[results.length - 1]!;
    const [topName, top] = results[0]!;
    const ratio = {
      scenario: scenarioName,
      compare: `${topName}/${baseName}`,
      rps_ratio: Math.round((top.rps / base.rps) * 100) / 100,
      p99_ratio: top.p99Ms && base.p99Ms ? Math.round((top.p99Ms / base.p99Ms) * 100) / 100 : null,
    };
    if (args.json) console.log(JSON.stringify(ratio));
    else console.log(`compare ${ratio.compare}: throughput ×${ratio.rps_ratio}${ratio.p99_ratio === null ? '' : `, p99 ×${ratio.p99_ratio}`}`);
  }
  if (!bools.has('no-docs')) {
    const written = writeBenchRows(scenarioName, results, flags, bools);
    if (written.length) h.log(`docs/benchmarks.md: row(s) ${written.map((k) => `\`${k}\``).join(', ')} rewritten (--no-docs leaves it alone)`);
  }
} catch (err) {
  exitCode = 1;
  console.error(err instanceof Error ? err.message : err);
} finally {
  await h.stopAll();
  await Promise.all([closeDb(), closeRedis(), closeMq()]);
}
process.exit(exitCode);
