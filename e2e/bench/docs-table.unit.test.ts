/** The bench's own rows in docs/benchmarks.md: each run rewrites its row and nothing else. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCH_DOC, NOT_MEASURED, TABLE_END, TABLE_START, renderRow, rowKey, updateTable } from './docs-table';
import type { RunResult } from './types';

const doc = `# x\n\ntext\n\n${TABLE_START}\n| run | measured (UTC) | machine | result | p99 | bare ceiling, same run | ratios |\n|---|---|---|---|---|---|---|\n| \`grab storm\` | ${NOT_MEASURED} | | | | | |\n| \`grab accept --connections 64\` | ${NOT_MEASURED} | | | | | |\n${TABLE_END}\n\nafter\n`;

const grab = (rps: number, extra: Record<string, unknown> = {}): RunResult => ({
  line: { scenario: 'grab', variant: 'accept', accepted_per_s: rps, ceiling_rps: 90_000, db_rps: 2_000, ...extra },
  rps,
  p99Ms: 12.34,
  failures: [],
  summary: [],
});

describe('docs/benchmarks.md table', () => {
  it('names a row after the scenario, the variant and the options that change what is measured', () => {
    expect(rowKey('grab', 'accept', { scenario: 'grab', strategy: 'accept', connections: '64' }, new Set(['json', 'no-docs']))).toBe('grab accept --connections 64');
    expect(rowKey('grab', 'storm', { rate: '5000', duration: '20' }, new Set(['no-db']))).toBe('grab storm --duration 20 --no-db --rate 5000');
  });

  it('rewrites only the row of the run, with the date, the machine, the ceiling and the ratios', () => {
    const key = 'grab accept --connections 64';
    const row = renderRow(grab(9_000), { key, now: new Date('2026-11-25T17:00:00Z'), machine: '2 cores, load 1.0' });
    expect(row).toBe('| `grab accept --connections 64` | 2026-11-25 17:00 | 2 cores, load 1.0 | 9 000 accepted/s | 12.3 ms | 90 000 req/s | ×0.10 the ceiling, ×4.50 the DB strategy |');
    const out = updateTable(doc, [{ key, row }]);
    expect(out).toContain(row);
    expect(out).toContain(`| \`grab storm\` | ${NOT_MEASURED} |`);
    expect(out.replace(row, `| \`${key}\` | ${NOT_MEASURED} | | | | | |`)).toBe(doc);
  });

  it('adds a row for an option set the table does not have yet, inside the markers', () => {
    const row = renderRow(grab(5_000, { variant: 'storm', accepted_per_s: 10 }), { key: 'grab storm --shape b', machine: 'm' });
    const out = updateTable(doc, [{ key: 'grab storm --shape b', row }]);
    expect(out.indexOf(row)).toBeGreaterThan(out.indexOf('`grab accept --connections 64`'));
    expect(out.indexOf(row)).toBeLessThan(out.indexOf(TABLE_END));
    expect(row).toContain('5 000 req/s');
  });

  it("a spike row gives the time to the last answer beside the bare server's, and the ratio", () => {
    const spike: RunResult = {
      line: { scenario: 'spike', variant: 'grab', stock: 1000, orders: 1000, errors: 0, answers: { '200': 1000, '410': 19_000, '503': 12 }, last_answer_s: 10.62, wait_p99_s: 9.1, bare_last_answer_s: 8.9, ratio_to_bare: 1.19 },
      rps: 1900,
      failures: [],
      summary: [],
    };
    expect(renderRow(spike, { key: 'spike grab --users 20000', now: new Date('2026-11-25T17:00:00Z'), machine: 'm' })).toBe(
      "| `spike grab --users 20000` | 2026-11-25 17:00 | m | last answer 10.6 s; 1 000 of 1 000 sold, 0 socket errors, 12 × 503 retried | 9.1 s | last answer 8.9 s | ×1.19 the bare server's time |",
    );
  });

  it("a room spike's row adds the tickets and the win order, by the clients' clocks and the sale's", () => {
    const room: RunResult = {
      line: {
        scenario: 'spike', variant: 'room', users: 20_000, stock: 1000, orders: 1000, errors: 0, answers: { '200': 21_000 }, last_answer_s: 6.35, wait_p99_s: 5.3, bare_last_answer_s: 3.51, ratio_to_bare: 1.81,
        first_ticket: 1022, first_soldout: 18_978, soldout_too_early: 0, kendall_tau: 0.982, sale_clock_inversions: 0, sale_clock_ties: 5425, out_of_place: 0, winners: 1000, reached_grab: 1012,
      },
      rps: 3300,
      failures: [],
      summary: [],
    };
    expect(renderRow(room, { key: 'spike room --users 20000', now: new Date('2026-11-27T02:30:00Z'), machine: 'm' })).toBe(
      "| `spike room --users 20000` | 2026-11-27 02:30 | m | last answer 6.3 s; 1 000 of 1 000 sold, 0 socket errors, 0 × 503 retried; first answer a ticket for 1 022 of 20 000, 已抢光 for 18 978 (0 too early); win order against ticket order: Kendall tau 0.982 (by the sale's clock: 0 pairs out of order, 5 425 in the same ms), 0 of 1 000 winners not among the first places of the 1 012 who grabbed | 5.3 s | last answer 3.5 s | ×1.81 the bare server's time |",
    );
  });

  it("a spike's row that measured the machine's CPU adds its ratio", () => {
    const spike: RunResult = {
      line: { scenario: 'spike', variant: 'grab', stock: 1000, orders: 1000, errors: 0, answers: { '200': 1000 }, last_answer_s: 7.4, wait_p99_s: 6.4, bare_last_answer_s: 5.5, ratio_to_bare: 1.35, cpu_ratio: 1.52 },
      rps: 2700,
      failures: [],
      summary: [],
    };
    expect(renderRow(spike, { key: 'spike grab --users 20000', now: new Date('2026-11-27T12:00:00Z'), machine: 'm' })).toMatch(
      /\| last answer 5\.5 s \| ×1\.35 the bare server's time \(CPU of servers \+ clients ×1\.52\) \|$/,
    );
  });

  it("a spike's row that measured the servers' wait for a core adds it beside the CPU ratio", () => {
    const spike: RunResult = {
      line: { scenario: 'spike', variant: 'room', stock: 1000, orders: 1000, errors: 0, answers: { '200': 1000 }, last_answer_s: 6.4, wait_p99_s: 5.1, bare_last_answer_s: 3.5, ratio_to_bare: 1.83, cpu_ratio: 1.4, web_waited_s: 2.31, bare_waited_s: 1.64 },
      rps: 2700,
      failures: [],
      summary: [],
    };
    expect(renderRow(spike, { key: 'spike room --users 20000', now: new Date('2026-11-28T16:00:00Z'), machine: 'm' })).toMatch(
      /×1\.83 the bare server's time \(CPU of servers \+ clients ×1\.40; the servers' main threads waited runnable for a core 2\.3 s \(app\), 1\.6 s \(bare\)\) \|$/,
    );
  });

  it("a spike row of several runs gives the median ratio, every run's, and the median run's figures", () => {
    const spike: RunResult = {
      line: { scenario: 'spike', variant: 'grab', stock: 1000, orders: 1000, errors: 0, answers: { '200': 1000 }, last_answer_s: 7.4, wait_p99_s: 6.4, bare_last_answer_s: 5.5, ratio_to_bare: 1.35, cpu_ratio: 1.52, runs: 3, ratios: [1.6, 1.35, 1.2], ratio_median: 1.35 },
      rps: 2700,
      failures: [],
      summary: [],
    };
    expect(renderRow(spike, { key: 'spike grab --runs 3 --users 20000', now: new Date('2026-11-28T12:00:00Z'), machine: 'm' })).toMatch(
      /\| last answer 5\.5 s \| ×1\.35 the bare server's time, median of 3 runs \(×1\.60, ×1\.35, ×1\.20\); the run at the median: ×1\.35 \(CPU of servers \+ clients ×1\.52\) \|$/,
    );
  });

  it("a conn row gives the servers' CPU per connection, the app beside the bare server, and the median ratio with every run's", () => {
    const conn: RunResult = {
      line: { scenario: 'conn', variant: 'soldout', runs: 3, app_us: 115.1, bare_us: 85.7, ratio: 1.34, ratios: [1.37, 1.33, 1.34], app_rps: 8682, bare_rps: 11344, wrk_app_us: 65.3, wrk_bare_us: 59.2 },
      rps: 8682,
      failures: [],
      summary: [],
    };
    expect(renderRow(conn, { key: 'conn soldout', now: new Date('2026-11-29T04:00:00Z'), machine: 'm' })).toBe(
      "| `conn soldout` | 2026-11-29 04:00 | m | server CPU 115.1 µs per connection, 8 682 connections/s (wrk's own CPU 65.3 µs per connection) | — | 85.7 µs per connection, 11 344 connections/s (wrk 59.2 µs) | ×1.34 the bare server's CPU per connection, median of 3 runs (×1.37, ×1.33, ×1.34) |",
    );
  });

  it('refuses a page without the markers instead of writing somewhere else', () => {
    expect(() => updateTable('# no table\n', [{ key: 'a', row: '| `a` |' }])).toThrow(/bench-table/);
  });

  it('the real page has the table and a row per scenario the bench documents', () => {
    const page = readFileSync(BENCH_DOC, 'utf8');
    expect(page.indexOf(TABLE_START)).toBeGreaterThan(0);
    expect(page.indexOf(TABLE_END)).toBeGreaterThan(page.indexOf(TABLE_START));
    for (const key of ['grab accept --connections 64', 'grab storm', 'shop cached', 'seckill redis', 'drain redis', 'locks all'])
      expect(page).toContain(`| \`${key}\` |`);
  });
});
