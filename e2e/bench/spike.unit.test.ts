/**
 * The real-concurrency spike's harness (e2e/bench/spike.ts) against a loopback server of this test
 * (no services): every user arrives on a connection of their own, from the source addresses given,
 * spread over the processes and the window; a 503 is retried on the same connection after
 * Retry-After with jitter; what the users got is counted, nothing invented.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { combineRuns, roomFigures, runSpike, sourceAddresses, spikeProblems, summarizeSpike, winOrder, type UserRecord } from './spike';
import { createChallenge, verifySolution } from 'altcha-lib';
import { lookDelayMs, retryDelayMs, solveAltcha } from './spike-flows';

const USERS = 120;
/** Per token: the sockets (address:port) its requests came on, and how many requests. */
const seen = new Map<string, { sockets: Set<string>; requests: number; at: number[] }>();
let server: http.Server;
let origin = '';

beforeAll(async () => {
  // The first grab of every user is shed (503, Retry-After 0.05 s), the second answered 200; a token 'bad-*' gets 500.
  server = http.createServer((req, res) => {
    req.resume();
    const token = (req.headers.authorization ?? '').replace('Bearer ', '');
    const s = seen.get(token) ?? { sockets: new Set(), requests: 0, at: [] };
    seen.set(token, s);
    s.sockets.add(`${req.socket.remoteAddress}:${req.socket.remotePort}`);
    s.at.push(Date.now());
    const first = ++s.requests === 1;
    if (token.startsWith('chunked-')) {
      // A chunked body in three pieces, as Next answers: the client reads it whole.
      res.writeHead(410, { 'content-type': 'application/json' });
      res.write('{"error":');
      setTimeout(() => res.end('{"code":"SOLD_OUT"}}'), 5);
      return;
    }
    const status = token.startsWith('bad-') ? 500 : token.startsWith('invalid-') ? 400 : first ? 503 : 200;
    const code = status === 503 ? 'SERVICE_UNAVAILABLE' : status === 400 ? 'VALIDATION' : 'INTERNAL';
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 503 ? { 'retry-after': '0.05' } : {}) });
    res.end(JSON.stringify(status === 200 ? { data: { orderId: '1' } } : { error: { code } }));
  });
  await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1', backlog: 1024 }, r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe('the real-concurrency spike', () => {
  it('each user on their own connection from the given addresses, within the window; a 503 retried on it after Retry-After', async () => {
    const tokens = Array.from({ length: USERS }, (_, i) => `user-${i}`);
    const sources = sourceAddresses(3, 201, 7);
    const t = Date.now();
    const run = await runSpike({ origin, path: '/api/seckill/1', flow: 'grab', tokens, clients: 2, sources, windowMs: 500 });
    const s = summarizeSpike(run, 2);

    expect(run.clients).toBe(2);
    expect(s.users).toBe(USERS);
    expect(s.finals).toEqual({ '200': USERS });
    expect(s.answers).toEqual({ '200': USERS, '503': USERS });
    expect(s.requests).toBe(2 * USERS);
    expect(s.errors).toBe(0);
    expect(s.fivexx).toBe(USERS); // the retried 503s are counted, not hidden
    expect(s.unanswered).toBe(0);
    // Arrivals spread over the window (the last user due at 499/500 of it), none before its time.
    expect(s.startedAllS).toBeGreaterThan(0.45);
    for (const r of run.records) expect(r.startMs).toBeGreaterThanOrEqual(r.dueMs - 1);
    expect(s.lastAnswerS).toBeGreaterThan(s.startedAllS);
    // Every user's first answer was the 503 (their final one came after the retry).
    expect(s.firstAllS).toBeGreaterThan(s.startedAllS);
    expect(s.firstAllS).toBeLessThan(s.lastAnswerS);
    expect(s.clientCpuS).toBeGreaterThan(0);

    const sockets = new Set<string>();
    const addresses = new Set<string>();
    for (const token of tokens) {
      const u = seen.get(token)!;
      expect(u.requests).toBe(2);
      expect(u.sockets.size).toBe(1); // the retry went on the user's own kept-alive connection
      // ... after Retry-After × [0.5, 1.5): 25–75 ms.
      expect(u.at[1]! - u.at[0]!).toBeGreaterThanOrEqual(20);
      const [socket] = u.sockets;
      sockets.add(socket!);
      addresses.add(socket!.slice(0, socket!.lastIndexOf(':')));
    }
    expect(sockets.size).toBe(USERS); // nobody shared a connection
    expect([...addresses].sort()).toEqual([...sources].sort());
    expect(Date.now() - t).toBeLessThan(15_000);
  }, 30_000);

  it('a 5xx other than 503 is a final answer, counted as unanswered', async () => {
    const run = await runSpike({ origin, path: '/x', flow: 'grab', tokens: ['bad-1', 'bad-2'], clients: 1, sources: sourceAddresses(1, 201, 8), windowMs: 10 });
    const s = summarizeSpike(run, 2);
    expect(s.finals).toEqual({ '500': 2 });
    expect(s.unanswered).toBe(2);
    expect(s.requests).toBe(2);
    expect(spikeProblems('the app', s)).toEqual(['the app: 2 answers 5xx other than 503', 'the app: 2 users without a final answer']);
  }, 30_000);

  it('a final answer of 400 (the flow sent something the server refused as invalid) fails the run; shed 503s retried to a 200 do not', async () => {
    const run = await runSpike({ origin, path: '/x', flow: 'grab', tokens: ['invalid-1', 'invalid-2', 'invalid-3'], clients: 1, sources: sourceAddresses(1, 201, 10), windowMs: 10 });
    const s = summarizeSpike(run, 2);
    expect(s.finals).toEqual({ '400': 3 });
    expect(s.codes).toEqual({ VALIDATION: 3 });
    expect(spikeProblems('the app', s)).toEqual(["the app: 3 users' final answer was a 400 (a request the server refused as invalid)"]);
    const fine = summarizeSpike(await runSpike({ origin, path: '/x', flow: 'grab', tokens: ['user-late-1'], clients: 1, sources: sourceAddresses(1, 201, 11), windowMs: 10 }), 2);
    expect(fine.answers).toEqual({ '200': 1, '503': 1 });
    expect(spikeProblems('the app', fine)).toEqual([]);
  }, 30_000);

  it('a chunked answer is read whole', async () => {
    const run = await runSpike({ origin, path: '/x', flow: 'grab', tokens: ['chunked-1', 'chunked-2'], clients: 1, sources: sourceAddresses(1, 201, 9), windowMs: 10 });
    const s = summarizeSpike(run, 2);
    expect(s.finals).toEqual({ '410': 2 });
    expect(s.codes).toEqual({ SOLD_OUT: 2 });
    expect(s.errors).toBe(0);
  }, 30_000);

  it('a client waits Retry-After × a jitter in [0.5, 1.5), 1 s without one', () => {
    const r = (h: Record<string, string>) => ({ status: 503, headers: h, json: undefined });
    expect(retryDelayMs(r({ 'retry-after': '2' }), () => 0)).toBe(1000);
    expect(retryDelayMs(r({ 'retry-after': '2' }), () => 0.999)).toBeCloseTo(2998);
    expect(retryDelayMs(r({}), () => 0.5)).toBe(1000);
  });

  it("the room flow's native solver finds the number altcha-lib verifies (and none for a wrong challenge)", async () => {
    const c = await createChallenge({ hmacKey: 'bench-test-key', maxnumber: 1000, number: 737 });
    const payload = solveAltcha(c as Parameters<typeof solveAltcha>[0]);
    expect(payload).not.toBeNull();
    expect(JSON.parse(Buffer.from(payload!, 'base64').toString()).number).toBe(737);
    expect(await verifySolution(payload!, 'bench-test-key')).toBe(true);
    expect(solveAltcha({ ...c, challenge: '0'.repeat(64) } as Parameters<typeof solveAltcha>[0])).toBeNull();
  });

  it("the room's next look: a quarter of the estimate, between 1 and 5 s (the page's rule)", () => {
    expect(lookDelayMs(0)).toBe(1000);
    expect(lookDelayMs(8000)).toBe(2000);
    expect(lookDelayMs(60_000)).toBe(5000);
    expect(lookDelayMs(null)).toBe(1000);
    // A whole number of ms: the room's `wait` is an integer, and 1234.5 is refused with a 400.
    expect(lookDelayMs(4938)).toBe(1235);
  });
});

describe('win order against ticket order (winOrder)', () => {
  const w = (position: number, wonMs: number) => ({ position, wonMs });

  it('in ticket order: no inversion, tau 1, nobody out of place', () => {
    const o = winOrder([w(1, 10), w(2, 20), w(3, 30), w(4, 40)], [1, 2, 3, 4, 5, 6]);
    expect(o).toMatchObject({ winners: 4, reached: 6, pairs: 6, inversions: 0, tau: 1, outOfPlace: 0 });
  });

  it('a tie (one clock moment) counts neither way: tau-a over all pairs', () => {
    const o = winOrder([w(1, 10), w(2, 10), w(3, 30), w(4, 40)], [1, 2, 3, 4]);
    expect(o).toMatchObject({ pairs: 6, inversions: 0, ties: 1 });
    expect(o.tau).toBeCloseTo(5 / 6, 10);
    expect(winOrder([w(2, 10), w(1, 10)], [1, 2])).toMatchObject({ inversions: 0, ties: 1, tau: 0 });
  });

  it('reversed: every pair inverted, tau −1', () => {
    const o = winOrder([w(1, 40), w(2, 30), w(3, 20), w(4, 10)], [1, 2, 3, 4]);
    expect(o.inversions).toBe(6);
    expect(o.tau).toBe(-1);
    expect(o.inversionShare).toBe(1);
  });

  it('counts each out-of-order pair once, as a brute-force count does', () => {
    // A fixed pseudo-random order (an LCG), so the figure is the same every run.
    let x = 12345;
    const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const ws = Array.from({ length: 300 }, (_, i) => w(i + 1, rand() * 1000));
    let brute = 0;
    for (const a of ws) for (const b of ws) if (a.position < b.position && a.wonMs > b.wonMs) brute++;
    const o = winOrder(ws, ws.map((v) => v.position));
    expect(brute).toBeGreaterThan(0);
    expect(o.inversions).toBe(brute);
    expect(o.pairs).toBe((300 * 299) / 2);
    expect(o.tau).toBeCloseTo(1 - (2 * brute) / o.pairs, 12);
  });

  it('a winner behind someone who reached the grab and lost is out of place', () => {
    // Places 1, 2, 4 won; 3 posted a grab and lost: 4 is not among the first three places of those who reached the grab.
    const o = winOrder([w(1, 10), w(2, 20), w(4, 30)], [1, 2, 3, 4]);
    expect(o.outOfPlace).toBe(1);
    expect(o.inversions).toBe(0);
  });

  it("roomFigures: first answers that were tickets, and winners are accepted grabs (200 without a code) with a place", () => {
    const rec = (index: number, o: Partial<UserRecord>): UserRecord => ({ index, dueMs: 0, startMs: 0, connectedMs: 0, firstMs: 0, finalMs: 100 + index, status: 200, requests: 1, errors: 0, marks: {}, ...o });
    const f = roomFigures([
      rec(0, { marks: { ticket: 1 }, position: 2, grabbed: true }),
      rec(1, { marks: { ticket: 1 }, position: 1, grabbed: true }),
      rec(2, { marks: { ticket: 1 }, position: 3, code: 'SOLD_OUT' }),
      rec(3, { position: 4, grabbed: true, status: 410, code: 'SOLD_OUT' }),
      rec(4, { marks: { soldoutFirst: 500 }, code: 'SOLD_OUT' }),
    ]);
    expect(f.firstTicket).toBe(3);
    expect(f.firstSoldOut).toBe(1);
    expect(f.soldOutTooEarly).toBe(0);
    expect(f.order).toMatchObject({ winners: 2, reached: 3, inversions: 1, outOfPlace: 0 });
  });

  it('roomFigures: a first 已抢光 before the last winner had their grab token is too early', () => {
    const rec = (index: number, o: Partial<UserRecord>): UserRecord => ({ index, dueMs: 0, startMs: 0, connectedMs: 0, firstMs: 0, finalMs: 100 + index, status: 200, requests: 1, errors: 0, marks: {}, ...o });
    const f = roomFigures([
      rec(0, { marks: { ticket: 1, token: 50 }, position: 1, grabbed: true }),
      rec(1, { marks: { ticket: 2, token: 90 }, position: 2, grabbed: true }),
      rec(2, { marks: { soldoutFirst: 80 }, code: 'SOLD_OUT' }),
      rec(3, { marks: { soldoutFirst: 95 }, code: 'SOLD_OUT' }),
    ]);
    expect(f).toMatchObject({ firstTicket: 2, firstSoldOut: 2, soldOutTooEarly: 1 });
  });
});

describe('several runs of a spike as one result (combineRuns)', () => {
  const run = (ratio: number, failures: string[] = []) => ({ line: { ratio_to_bare: ratio, last_answer_s: ratio * 10 }, rps: ratio, failures, summary: [`ratio ${ratio}`] });

  it('one run is that run, after the header', () => {
    const one = combineRuns(['header'], [run(1.4)]);
    expect(one.line).toEqual({ ratio_to_bare: 1.4, last_answer_s: 14 });
    expect(one.summary).toEqual(['header', 'ratio 1.4']);
  });

  it("an odd count: the median run's figures, every ratio in run order, the median and the range", () => {
    const three = combineRuns(['h'], [run(1.9), run(1.2), run(1.45)]);
    expect(three.line).toMatchObject({ ratio_to_bare: 1.45, last_answer_s: 14.5, runs: 3, ratios: [1.9, 1.2, 1.45], ratio_median: 1.45, ratio_min: 1.2, ratio_max: 1.9 });
    expect(three.rps).toBe(1.45);
    expect(three.summary.at(-1)).toBe("runs: ×1.90, ×1.20, ×1.45 the bare server's time; median ×1.45 (×1.20–×1.90); the row shows the run at the median");
  });

  it('an even count: the median between the middle two, the figures of the lower one', () => {
    const four = combineRuns([], [run(1.3), run(1.1), run(1.7), run(1.5)]);
    expect(four.line).toMatchObject({ ratio_to_bare: 1.3, ratio_median: 1.4, ratio_min: 1.1, ratio_max: 1.7 });
  });

  it("any run's failure fails the whole", () => {
    expect(combineRuns([], [run(1.2), run(1.3, ['run 2 of 2: lost 1'])]).failures).toEqual(['run 2 of 2: lost 1']);
  });
});
