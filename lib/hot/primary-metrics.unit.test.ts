/**
 * Next's process of a split server asks the primary for the web processes' metrics over its IPC
 * channel (lib/hot/primary-metrics.ts): a real child process, this test as its primary.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { answerMetricsTo } from './primary-metrics';

const dir = mkdtempSync(path.join(tmpdir(), 'primary-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` in a child with NEXT_SOCKET set (as the primary starts Next's process) and returns what it printed. */
async function child(body: string, source: () => Promise<string>, env: Record<string, string> = { NEXT_SOCKET: path.join(dir, 'next.sock') }, reuseMs = 200): Promise<string> {
  const file = path.join(dir, `child-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, `import { behindSplitPrimary, metricsFromPrimary } from '${path.resolve('lib/hot/primary-metrics.ts')}';\n${body}\n`);
  const proc = fork(file, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  answerMetricsTo(proc, source, reuseMs);
  // stderr too, so a child that fails to start shows why in the assertion that reads this.
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => proc.once('exit', r));
  return out.trim();
}

describe("Next's process of a split server reads the web processes' metrics from the primary", () => {
  it('asks over the channel and gets the text; asks at once share one read, a later ask reads again', { timeout: 30_000 }, async () => {
    let n = 0;
    const out = await child(
      `const first = await Promise.all([1, 2, 3].map(() => metricsFromPrimary()));\nawait new Promise((r) => setTimeout(r, 400));\nconst later = await metricsFromPrimary();\nconsole.log(JSON.stringify({ behind: behindSplitPrimary(), first, later }));\nprocess.disconnect();`,
      async () => `hmdp_sale_grabs_total{voucher="7",outcome="accepted"} ${++n}`,
    );
    const got = JSON.parse(out) as { behind: boolean; first: string[]; later: string };
    expect(got.behind).toBe(true);
    expect(got.first).toEqual(Array(3).fill('hmdp_sale_grabs_total{voucher="7",outcome="accepted"} 1'));
    expect(got.later).toBe('hmdp_sale_grabs_total{voucher="7",outcome="accepted"} 2');
    expect(n).toBe(2);
  });

  it('a failing source is a rejection, not a hang; outside a split server it refuses at once', { timeout: 30_000 }, async () => {
    const failing = await child(
      `const r = await metricsFromPrimary().then(() => 'answered', (e: Error) => e.message);\nconsole.log(r);\nprocess.disconnect();`,
      () => Promise.reject(new Error('a web process is gone')),
    );
    expect(failing, failing).toBe('a web process is gone');
    const outside = await child(
      `const r = await metricsFromPrimary().then(() => 'answered', (e: Error) => e.message);\nconsole.log(behindSplitPrimary(), r);\nprocess.disconnect();`,
      async () => 'x',
      { NEXT_SOCKET: '' },
    );
    expect(outside).toBe('false not behind a split server primary');
  });
});
