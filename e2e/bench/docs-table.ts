/**
 * The one table of current figures in docs/benchmarks.md is written by the bench itself: after a
 * verified run, each scenario variant (with the options that change what it measures) rewrites its
 * own row, with the date, the machine, the bare node:http ceiling measured in the same run and the
 * ratios. Rows of runs that did not happen stay as they were; a new option set gets a new row.
 * `npm run bench -- … --no-docs` leaves the file alone.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { RunResult } from './types';

export const BENCH_DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
export const TABLE_START = '<!-- bench-table -->';
export const TABLE_END = '<!-- /bench-table -->';
export const NOT_MEASURED = 'not yet measured on this layout';

/** Flags that do not change what a run measures, so they are not part of a row's name. */
const NEUTRAL_FLAGS = new Set(['scenario', 'strategy', 'json', 'compare', 'build', 'no-docs']);

/** A row's name: `grab accept`, `grab accept --connections 64`, `seckill redis --rate 500`. */
export function rowKey(scenario: string, variant: string, flags: Record<string, string>, bools: Iterable<string>): string {
  const opts = [
    ...Object.entries(flags).filter(([k]) => !NEUTRAL_FLAGS.has(k)).map(([k, v]) => `--${k} ${v}`),
    ...[...bools].filter((k) => !NEUTRAL_FLAGS.has(k)).map((k) => `--${k}`),
  ].sort();
  return [scenario, variant, ...opts].join(' ');
}

const n = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
const fmt = (v: number) => Math.round(v).toLocaleString('en-US').replace(/,/g, ' ');
const ratio = (a: number, b: number) => `×${(a / b).toFixed(2)}`;

export interface RowContext {
  key: string;
  /** The --compare partner this row was measured against, e.g. `db`, with its throughput. */
  compareWith?: { variant: string; rps: number };
  now?: Date;
  machine?: string;
}

const cellsToRow = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;

/**
 * The real-concurrency spike's row: its figure is a time (until the last user's final answer),
 * beside the bare server's time for the same spike; p99 is a user's wait from arrival to answer.
 * When the run measured it, the CPU that servers and clients took together, app over bare: on a
 * machine whose cores the spike keeps busy, the time ratio follows it. A row of several runs
 * (--runs N) gives the median ratio and every run's, and the other figures of the run at the median.
 */
function renderSpikeRow(line: Record<string, unknown>, ctx: RowContext, when: string, machine: string): string {
  const s = (v: unknown) => `${Number(v).toFixed(1)} s`;
  const answers = (line.answers ?? {}) as Record<string, number>;
  const room =
    line.variant === 'room'
      ? `; first answer a ticket for ${fmt(Number(line.first_ticket))} of ${fmt(Number(line.users))}${line.first_soldout !== undefined ? `, 已抢光 for ${fmt(Number(line.first_soldout))} (${fmt(Number(line.soldout_too_early))} too early)` : ''}${Number(line.first_full) > 0 ? `, 名额已满 for ${fmt(Number(line.first_full))}` : ''}; win order against ticket order: Kendall tau ${Number(line.kendall_tau).toFixed(3)}${line.sale_clock_inversions !== undefined ? ` (by the sale's clock: ${fmt(Number(line.sale_clock_inversions))} pairs out of order, ${fmt(Number(line.sale_clock_ties))} in the same ms)` : ''}, ${Number(line.out_of_place)} of ${fmt(Number(line.winners))} winners not among the first places of the ${fmt(Number(line.reached_grab))} who grabbed`
      : '';
  const result = `last answer ${s(line.last_answer_s)}; ${fmt(Number(line.orders))} of ${fmt(Number(line.stock))} sold, ${Number(line.errors)} socket errors, ${answers['503'] ?? 0} × 503 retried${room}`;
  const waited = line.web_waited_s !== undefined ? `; the servers' main threads waited runnable for a core ${s(line.web_waited_s)} (app), ${s(line.bare_waited_s)} (bare)` : '';
  const cpu = line.cpu_ratio !== undefined ? ` (CPU of servers + clients ×${Number(line.cpu_ratio).toFixed(2)}${waited})` : '';
  const x = (v: unknown) => `×${Number(v).toFixed(2)}`;
  // --runs N: the median of the runs' ratios with their range; the other figures are the median run's.
  const figure = Number(line.runs) > 1
    ? `${x(line.ratio_median)} the bare server's time, median of ${Number(line.runs)} runs (${(line.ratios as number[]).map(x).join(', ')}); the run at the median: ${x(line.ratio_to_bare)}${cpu}`
    : `${x(line.ratio_to_bare)} the bare server's time${cpu}`;
  return cellsToRow([`\`${ctx.key}\``, when, machine, result, s(line.wait_p99_s), `last answer ${s(line.bare_last_answer_s)}`, figure]);
}

/** The admission scenario's row: the grab's p90 at C and 3C clients, adaptive beside fixed. */
function renderAdmissionRow(line: Record<string, unknown>, ctx: RowContext, when: string, machine: string): string {
  const pair = (k: string) => (line[k] as number[] | undefined) ?? [NaN, NaN];
  const [a1, a3] = pair('adaptive_p90_ms');
  const [f1, f3] = pair('fixed_p90_ms');
  const [ar1, ar3] = pair('adaptive_per_s');
  const [fr1, fr3] = pair('fixed_per_s');
  return cellsToRow([
    `\`${ctx.key}\``, when, machine,
    `adaptive: p90 ${a1} → ${a3} ms, ${fmt(ar1!)} → ${fmt(ar3!)} answered/s; fixed: p90 ${f1} → ${f3} ms, ${fmt(fr1!)} → ${fmt(fr3!)} answered/s (C → 3C clients)`,
    '—', '—',
    `p90 ×${Number(line.adaptive_growth).toFixed(2)} adaptive, ×${Number(line.fixed_growth).toFixed(2)} fixed while the load tripled`,
  ]);
}

/** The conn scenario's row: the servers' CPU per new connection for a known answer, the app beside the bare server (medians of --runs). */
function renderConnRow(line: Record<string, unknown>, ctx: RowContext, when: string, machine: string): string {
  const us = (v: unknown) => `${Number(v).toFixed(1)} µs`;
  const ratios = ((line.ratios as number[] | undefined) ?? []).map((x) => `×${x.toFixed(2)}`).join(', ');
  return cellsToRow([
    `\`${ctx.key}\``, when, machine,
    `server CPU ${us(line.app_us)} per connection, ${fmt(Number(line.app_rps))} connections/s (wrk's own CPU ${us(line.wrk_app_us)} per connection)`,
    '—',
    `${us(line.bare_us)} per connection, ${fmt(Number(line.bare_rps))} connections/s (wrk ${us(line.wrk_bare_us)})`,
    `×${Number(line.ratio).toFixed(2)} the bare server's CPU per connection, median of ${Number(line.runs)} runs (${ratios})`,
  ]);
}

/** One markdown row for a verified run; every figure comes from the run's own result. */
export function renderRow(r: RunResult, ctx: RowContext): string {
  const line = r.line;
  const when = (ctx.now ?? new Date()).toISOString().slice(0, 16).replace('T', ' ');
  const machine = ctx.machine ?? `${availableParallelism()} cores, load ${loadavg()[0]!.toFixed(1)}`;
  if (line.scenario === 'spike') return renderSpikeRow(line, ctx, when, machine);
  if (line.scenario === 'admission') return renderAdmissionRow(line, ctx, when, machine);
  if (line.scenario === 'conn') return renderConnRow(line, ctx, when, machine);
  const accepted = n(line.accepted_per_s);
  const rows = Array.isArray(line.rows) ? (line.rows as { backend: string; perSecond: number; p99Ms: number }[]) : null;
  const result = rows
    ? rows.map((x) => `${x.backend} ${fmt(x.perSecond)}/s (p99 ${x.p99Ms} ms)`).join(', ')
    : accepted && line.variant === 'accept'
      ? `${fmt(accepted)} accepted/s`
      : `${fmt(r.rps)} req/s`;
  const ceiling = n(line.ceiling_rps);
  const dbRps = n(line.db_rps);
  const ratios = [
    ...(ceiling ? [`${ratio(r.rps, ceiling)} the ceiling`] : []),
    ...(dbRps ? [`${ratio(r.rps, dbRps)} the DB strategy`] : []),
    ...(ctx.compareWith ? [`${ratio(r.rps, ctx.compareWith.rps)} ${ctx.compareWith.variant}`] : []),
  ];
  const p99 = r.p99Ms && Number.isFinite(r.p99Ms) ? `${r.p99Ms.toFixed(1)} ms` : '—';
  const cells = [`\`${ctx.key}\``, when, machine, result, p99, ceiling ? `${fmt(ceiling)} req/s` : '—', ratios.join(', ') || '—'];
  return cellsToRow(cells);
}

/** The markdown with each given row put in place of the row of the same name (or added at the end). */
export function updateTable(markdown: string, rows: { key: string; row: string }[]): string {
  const start = markdown.indexOf(TABLE_START);
  const end = markdown.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${TABLE_START} … ${TABLE_END} table`);
  const body = markdown.slice(start + TABLE_START.length, end).split('\n');
  for (const { key, row } of rows) {
    const at = body.findIndex((l) => l.startsWith(`| \`${key}\` |`));
    if (at >= 0) body[at] = row;
    else {
      let last = body.length - 1;
      while (last > 0 && body[last]!.trim() === '') last--;
      body.splice(last + 1, 0, row);
    }
  }
  return markdown.slice(0, start + TABLE_START.length) + body.join('\n') + markdown.slice(end);
}

/** After a run: rewrite the rows of its verified variants in docs/benchmarks.md. */
export function writeBenchRows(
  scenario: string,
  results: [variant: string, result: RunResult][],
  flags: Record<string, string>,
  bools: Set<string>,
): string[] {
  const ok = results.filter(([, r]) => r.failures.length === 0);
  if (!ok.length) return [];
  const base = results.length > 1 ? results[results.length - 1]! : undefined;
  const rows = ok.map(([variant, r]) => {
    const key = rowKey(scenario, variant, flags, bools);
    const compareWith = base && base[0] !== variant ? { variant: base[0], rps: base[1].rps } : undefined;
    return { key, row: renderRow(r, { key, compareWith }) };
  });
  writeFileSync(BENCH_DOC, updateTable(readFileSync(BENCH_DOC, 'utf8'), rows));
  return rows.map((r) => r.key);
}
