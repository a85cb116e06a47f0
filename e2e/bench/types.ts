/** The contract between the bench runner and its scenarios (one file each under scenarios/). */
import type { Harness } from './harness';

export interface BenchArgs {
  scenario: string;
  json: boolean;
  compare: boolean;
  /** Users logged in through the real SMS path. */
  users: number;
  /** Stock of the fresh voucher. */
  stock: number;
  /** Concurrent connections of the storm. */
  connections: number;
  /** Storm length in seconds. */
  duration: number;
  /** Fixed offered rate (requests/s, open loop); undefined = as fast as the connections go. */
  rate?: number;
  /** Order worker processes. */
  workers: number;
  /** Messages pre-filled for the drain scenario. */
  messages: number;
  /** Any other --flag value, for scenarios with options of their own. */
  extra: Record<string, string>;
}

export interface RunResult {
  /** The `--json` line. */
  line: Record<string, unknown>;
  /** Human-readable lines for the summary. */
  summary: string[];
  /** What `--compare` puts side by side. */
  rps: number;
  p99Ms?: number;
  /** Correctness failures (oversold, lost, ...): the runner exits non-zero when any. */
  failures: string[];
}

export interface Scenario {
  description: string;
  /** Variants `--strategy` picks from; `--compare` runs them all, ratios relative to the first. */
  variants: string[];
  /** False for scenarios that start no web server (no `next build` needed). */
  needsBuild?: boolean;
  run(h: Harness, args: BenchArgs, variant: string): Promise<RunResult>;
}
