/**
 * The real-concurrency spike (docs/benchmarks.md#the-real-concurrency-spike): N distinct users, each
 * on their own connection, all arriving within one window (1 s), from several client processes
 * (e2e/bench/spike-client.ts) and several loopback source addresses (each address has ~28k
 * ephemeral ports: net.ipv4.ip_local_port_range). Each user runs a flow (e2e/bench/spike-flows.ts)
 * to its final answer. `runSpike` returns what happened to every user; `summarizeSpike` turns that
 * into the figures the bench prints: errors, 5xx, final answers, how fast connections were opened
 * and the time until the last user had their final answer.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { SpikeUser } from './spike-flows';
import type { RunResult } from './types';

/** One user's spike, times in ms since the spike's start (t0). */
export interface UserRecord {
  index: number;
  /** When the user was due to arrive, and when their first request actually started. */
  dueMs: number;
  startMs: number;
  /** When their first connection's handshake completed (NaN: never). */
  connectedMs: number;
  /** Their first answer of any kind, and their final answer (NaN: none). */
  firstMs: number;
  finalMs: number;
  /** The final answer's status (0: gave up without one) and error code. */
  status: number;
  code?: string;
  requests: number;
  /** Socket-level failures (reset, refused, timed out). */
  errors: number;
  /** Steps the flow marked (ms since t0). */
  marks: Record<string, number>;
  /** The room flow: the user's last known place, and whether they posted a grab. */
  position?: number;
  grabbed?: boolean;
}

export interface ClientSetup {
  type: 'setup';
  origin: string;
  path: string;
  flow: string;
  options: Record<string, string>;
  users: SpikeUser[];
  /** Users in the whole spike (over every client process). */
  total: number;
  windowMs: number;
  sources: string[];
  timeoutMs: number;
}

export interface ClientDone {
  type: 'done';
  records: UserRecord[];
  /** Every answer the process saw, by status (503s that were retried included). */
  statuses: Record<string, number>;
  /** Socket errors by code. */
  errors: Record<string, number>;
  /** CPU seconds (user + system) the process used from the start to its last user's answer. */
  cpuS: number;
  /** Of which in the kernel (system time: on loopback, much of the TCP work of both ends). */
  systemS: number;
}

export interface SpikeOptions {
  origin: string;
  path: string;
  flow: string;
  options?: Record<string, string>;
  tokens: string[];
  /** Client processes (default 4). */
  clients?: number;
  /** Source addresses the users are spread over (127.a.b.1 …). */
  sources: string[];
  windowMs?: number;
  timeoutMs?: number;
  /** When the spike starts (epoch ms; a sale's start can be set inside the window): if it has passed once every client is ready, 300 ms from then. */
  t0?: number;
}

export interface SpikeRun {
  records: UserRecord[];
  statuses: Record<string, number>;
  errors: Record<string, number>;
  clientCpuS: number;
  clientSystemS: number;
  clients: number;
  /** When the spike started (epoch ms). */
  t0: number;
}

const CLIENT = path.join(import.meta.dirname, 'spike-client.ts');

/** `count` loopback source addresses 127.<run>.<phase>.1 …: a phase of its own per spike, so one spike's TIME_WAIT ports never stand in the next one's way. */
export function sourceAddresses(count: number, run: number, phase: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.${run}.${phase}.${i + 1}`);
}

export async function runSpike(o: SpikeOptions): Promise<SpikeRun> {
  const clients = Math.max(1, Math.min(o.clients ?? 4, o.tokens.length));
  const windowMs = o.windowMs ?? 1000;
  const procs: ChildProcess[] = [];
  let t0 = 0;
  try {
    const results = await Promise.all(
      Array.from({ length: clients }, (_, c) => {
        const child = fork(CLIENT, [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        procs.push(child);
        // Interleaved: user i is in process i mod clients, so every process arrives through the whole window.
        const users = o.tokens.flatMap((token, index) => (index % clients === c ? [{ index, token }] : []));
        const setup: ClientSetup = { type: 'setup', origin: o.origin, path: o.path, flow: o.flow, options: o.options ?? {}, users, total: o.tokens.length, windowMs, sources: o.sources, timeoutMs: o.timeoutMs ?? 60_000 };
        const ready = new Promise<void>((resolve, reject) => {
          child.once('error', reject);
          child.on('message', (m: { type: string }) => m.type === 'ready' && resolve());
          child.once('exit', (code, signal) => reject(new Error(`spike client ${c} exited (${code ?? signal}) before it was ready`)));
        });
        const done = new Promise<ClientDone>((resolve, reject) => {
          child.on('message', (m: ClientDone) => m.type === 'done' && resolve(m));
          // 'close' (not 'exit'): it comes after every message the process sent.
          child.once('close', (code, signal) => reject(new Error(`spike client ${c} exited (${code ?? signal}) before it was done`)));
        });
        done.catch(() => {}); // awaited below, after every client is ready
        child.send(setup);
        return ready.then(() => ({ child, done }));
      }),
    ).then((ready) => {
      // Everyone starts at the same moment, far enough ahead for the message to reach each process.
      t0 = Math.max(o.t0 ?? 0, Date.now() + 300);
      for (const { child } of ready) child.send({ type: 'go', t0 });
      return Promise.all(ready.map((r) => r.done));
    });
    const statuses: Record<string, number> = {};
    const errors: Record<string, number> = {};
    for (const r of results) {
      for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
      for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
    }
    return { records: results.flatMap((r) => r.records), statuses, errors, clientCpuS: results.reduce((s, r) => s + r.cpuS, 0), clientSystemS: results.reduce((s, r) => s + r.systemS, 0), clients, t0 };
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  }
}

export interface SpikeSummary {
  users: number;
  /** Final answers by status (0: no answer, gave up). */
  finals: Record<string, number>;
  /** Final answers by error code. */
  codes: Record<string, number>;
  /** Every answer by status, retried 503s included. */
  answers: Record<string, number>;
  /** Socket errors (all), and users who met at least one. */
  errors: number;
  usersWithErrors: number;
  /** Answers 5xx (any, retried ones included), and users whose final answer was 5xx or none. */
  fivexx: number;
  unanswered: number;
  requests: number;
  /** Seconds from t0: 99 % / all users had started their first request; had connected. */
  started99S: number;
  startedAllS: number;
  connectedAllS: number;
  /** Seconds from t0 until every user had a first answer (of any kind). */
  firstAllS: number;
  /** Seconds from t0 until the last user's final answer: the figure the spike is about. */
  lastAnswerS: number;
  /** A user's wait from their arrival to their final answer, s. */
  waitP50S: number;
  waitP99S: number;
  /** The client processes' CPU, seconds and as a share of the machine over the spike. */
  clientCpuS: number;
  clientSystemS: number;
  clientShare: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const bump = (m: Record<string, number>, k: string | number) => (m[k] = (m[k] ?? 0) + 1);

export function summarizeSpike(run: SpikeRun, cores = availableParallelism()): SpikeSummary {
  const finals: Record<string, number> = {};
  const codes: Record<string, number> = {};
  const starts: number[] = [];
  const waits: number[] = [];
  let connectedAll = 0;
  let lastAnswer = 0;
  let firstAll = 0;
  let usersWithErrors = 0;
  let unanswered = 0;
  let requests = 0;
  for (const r of run.records) {
    bump(finals, r.status);
    if (r.code) bump(codes, r.code);
    starts.push(r.startMs);
    requests += r.requests;
    if (r.errors) usersWithErrors++;
    if (r.status === 0 || r.status >= 500) unanswered++;
    connectedAll = Math.max(connectedAll, Number.isFinite(r.connectedMs) ? r.connectedMs : Infinity);
    firstAll = Math.max(firstAll, Number.isFinite(r.firstMs) ? r.firstMs : Infinity);
    if (Number.isFinite(r.finalMs)) {
      lastAnswer = Math.max(lastAnswer, r.finalMs);
      waits.push(r.finalMs - r.dueMs);
    }
  }
  starts.sort((a, b) => a - b);
  waits.sort((a, b) => a - b);
  const fivexx = Object.entries(run.statuses).filter(([k]) => k.startsWith('5')).reduce((n, [, v]) => n + v, 0);
  const lastAnswerS = lastAnswer / 1000;
  return {
    users: run.records.length,
    finals,
    codes,
    answers: run.statuses,
    errors: Object.values(run.errors).reduce((a, b) => a + b, 0),
    usersWithErrors,
    fivexx,
    unanswered,
    requests,
    started99S: quantile(starts, 0.99) / 1000,
    startedAllS: (starts[starts.length - 1] ?? NaN) / 1000,
    connectedAllS: connectedAll / 1000,
    firstAllS: firstAll / 1000,
    lastAnswerS,
    waitP50S: quantile(waits, 0.5) / 1000,
    waitP99S: quantile(waits, 0.99) / 1000,
    clientCpuS: run.clientCpuS,
    clientSystemS: run.clientSystemS,
    clientShare: lastAnswerS > 0 ? run.clientCpuS / (lastAnswerS * cores) : NaN,
  };
}

/**
 * Ticket order against win order, for the users who won (accepted grab) with a known place:
 * sorted by the moment their grab was answered, `inversions` counts the pairs where the later
 * place won first (of `pairs`); `tau` = 1 − 2 · inversions / pairs (Kendall's tau without ties:
 * 1 = exactly in ticket order, 0 = no relation, −1 = reversed). `outOfPlace`: winners whose place
 * is not among the lowest `winners` places of everyone who posted a grab (0 = the winners are
 * exactly the first places of those who reached the grab).
 */
export interface WinOrder {
  winners: number;
  reached: number;
  pairs: number;
  inversions: number;
  /** Pairs won at the same moment (a clock's resolution): neither in order nor out of it. */
  ties: number;
  /** The places of everyone who reached the grab (the first `winners` of them are the places that should win). */
  positionsReached: number[];
  inversionShare: number;
  tau: number;
  outOfPlace: number;
}

export function winOrder(winners: { position: number; wonMs: number }[], reachedPositions: number[]): WinOrder {
  const byTime = [...winners].sort((a, b) => a.wonMs - b.wonMs || a.position - b.position);
  const n = byTime.length;
  let inversions = 0;
  // Merge sort of the places in win order, counting the pairs out of order: O(n log n).
  const count = (a: number[]): number[] => {
    if (a.length < 2) return a;
    const mid = a.length >> 1;
    const l = count(a.slice(0, mid));
    const r = count(a.slice(mid));
    const out: number[] = [];
    let i = 0;
    let j = 0;
    while (i < l.length && j < r.length) {
      if (l[i]! <= r[j]!) out.push(l[i++]!);
      else {
        inversions += l.length - i;
        out.push(r[j++]!);
      }
    }
    return out.concat(l.slice(i), r.slice(j));
  };
  count(byTime.map((w) => w.position));
  // Sorted by place within a moment, so a tie is never counted an inversion; counted here instead.
  let ties = 0;
  for (let i = 0, j = 0; i < n; i = j) {
    while (j < n && byTime[j]!.wonMs === byTime[i]!.wonMs) j++;
    ties += ((j - i) * (j - i - 1)) / 2;
  }
  const pairs = (n * (n - 1)) / 2;
  const firstPlaces = new Set([...reachedPositions].sort((a, b) => a - b).slice(0, n));
  const outOfPlace = byTime.filter((w) => !firstPlaces.has(w.position)).length;
  return { winners: n, reached: reachedPositions.length, positionsReached: reachedPositions, pairs, inversions, ties, inversionShare: pairs ? inversions / pairs : 0, tau: pairs ? (pairs - ties - 2 * inversions) / pairs : 1, outOfPlace };
}

export interface RoomFigures {
  /** Users whose first answer was a ticket with a place. */
  firstTicket: number;
  /** Users whose first answer was 已抢光 (they arrived after the last unit went). */
  firstSoldOut: number;
  /** Users whose first answer was 名额已满: no ticket, every unit spoken for (ROOM_RESERVE_PERCENT). */
  firstFull: number;
  /**
   * Of those, how many heard it before the last winner had even been given a grab token (ms since
   * the spike's start): a sold-out told too early. Must be 0.
   */
  soldOutTooEarly: number;
  order: WinOrder;
}

/** The room's figures from a spike's records: what the first answers were, and win order against ticket order. */
export function roomFigures(records: UserRecord[]): RoomFigures {
  const firstTicket = records.filter((r) => r.marks.ticket !== undefined).length;
  const won = records.filter((r) => r.status === 200 && !r.code && r.position !== undefined && Number.isFinite(r.finalMs));
  const reached = records.filter((r) => r.grabbed && r.position !== undefined).map((r) => r.position!);
  const lastToken = Math.max(-Infinity, ...won.map((r) => r.marks.token ?? -Infinity));
  const soldOutFirst = records.filter((r) => r.marks.soldoutFirst !== undefined);
  return {
    firstTicket,
    firstSoldOut: soldOutFirst.length,
    firstFull: records.filter((r) => r.marks.fullFirst !== undefined).length,
    soldOutTooEarly: soldOutFirst.filter((r) => r.marks.soldoutFirst! < lastToken).length,
    order: winOrder(won.map((r) => ({ position: r.position!, wonMs: r.finalMs })), reached),
  };
}

/**
 * When the users reached each step (ms since the spike's start): the first, the median and the
 * last of those who reached it, per step the flow marks (ticket, admitted, solved, token, …), and
 * the winners' final answers — where a spike's time went.
 */
export function stepTimeline(records: UserRecord[]): string {
  const steps = new Map<string, number[]>();
  for (const r of records) for (const [k, v] of Object.entries(r.marks)) (steps.get(k) ?? steps.set(k, []).get(k)!).push(v);
  const won = records.filter((r) => r.status === 200 && !r.code && Number.isFinite(r.finalMs)).map((r) => r.finalMs);
  if (won.length) steps.set('won', won);
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return [...steps]
    .map(([k, v]) => {
      v.sort((a, b) => a - b);
      return `${k} ${v.length}: ${s(v[0]!)}–${s(v[Math.floor(v.length / 2)]!)}–${s(v[v.length - 1]!)} s`;
    })
    .join(' · ');
}

const r2 = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : n);
const hist = (m: Record<string, number>) => Object.entries(m).map(([k, v]) => `${k}×${v}`).join(' ') || '–';

/** One line: what the users got and how fast. */
export function formatSpike(s: SpikeSummary, errors: Record<string, number>): string {
  return (
    `${s.users} users, ${s.requests} requests · final ${hist(s.finals)}${Object.keys(s.codes).length ? ` (${hist(s.codes)})` : ''} · all answers ${hist(s.answers)} · ` +
    `${s.errors} socket errors${s.errors ? ` (${hist(errors)}, ${s.usersWithErrors} users)` : ''} · started 99 % by ${r2(s.started99S)} s, all by ${r2(s.startedAllS)} s, all connected by ${r2(s.connectedAllS)} s, all had a first answer by ${r2(s.firstAllS)} s · ` +
    `last answer ${r2(s.lastAnswerS)} s · wait p50 ${r2(s.waitP50S)} s, p99 ${r2(s.waitP99S)} s · clients' CPU ${r2(s.clientCpuS)} s, ${r2(s.clientSystemS)} s of it in the kernel (${Math.round(s.clientShare * 100)} % of the machine)`
  );
}

/**
 * Several runs of the same spike as one result: the figures of the run whose ratio is the median
 * (the lower of the two middle ones for an even count), the ratio of every run and their median
 * and range beside them, each run's summary, and every run's failures (a correctness failure in
 * any run fails the whole).
 */
export function combineRuns(header: string[], results: RunResult[]): RunResult {
  if (results.length === 1) return { ...results[0]!, summary: [...header, ...results[0]!.summary] };
  const ratios = results.map((r) => Number(r.line.ratio_to_bare));
  const byRatio = results.map((r, i) => ({ r, ratio: ratios[i]! })).sort((x, y) => x.ratio - y.ratio);
  const mid = byRatio[Math.floor((byRatio.length - 1) / 2)]!;
  const sorted = byRatio.map((x) => x.ratio);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  const runs = { runs: results.length, ratios, ratio_median: Math.round(median * 100) / 100, ratio_min: sorted[0]!, ratio_max: sorted[sorted.length - 1]! };
  return {
    line: { ...mid.r.line, ...runs },
    rps: mid.r.rps,
    p99Ms: mid.r.p99Ms,
    failures: results.flatMap((r) => r.failures),
    summary: [
      ...header,
      ...results.flatMap((r, i) => [`run ${i + 1} of ${results.length}:`, ...r.summary]),
      `runs: ×${ratios.map((x) => x.toFixed(2)).join(', ×')} the bare server's time; median ×${runs.ratio_median.toFixed(2)} (×${runs.ratio_min.toFixed(2)}–×${runs.ratio_max.toFixed(2)}); the row shows the run at the median`,
    ],
  };
}

/**
 * What fails a spike's run, for one server: socket errors, 5xx answers other than 503 (a 503 is
 * the shedding the product means, retried by the client after Retry-After; printed, counted in
 * the row), users without a final answer, and users whose final answer was a 400: the flow sent a
 * request the server found invalid (a long poll's `wait` of 1234.5 ms once ended 109 users' room
 * visits that way, unseen), so what the run measured is not the flow it names.
 */
export function spikeProblems(who: string, s: SpikeSummary): string[] {
  const other5xx = s.fivexx - (s.answers['503'] ?? 0);
  const invalid = s.finals['400'] ?? 0;
  return [
    ...(s.errors ? [`${who}: ${s.errors} socket errors`] : []),
    ...(other5xx ? [`${who}: ${other5xx} answers 5xx other than 503`] : []),
    ...(s.unanswered ? [`${who}: ${s.unanswered} users without a final answer`] : []),
    ...(invalid ? [`${who}: ${invalid} users' final answer was a 400 (a request the server refused as invalid)`] : []),
  ];
}
