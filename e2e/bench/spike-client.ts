/**
 * One client process of the real-concurrency spike (forked by e2e/bench/spike.ts, several at once):
 * gets its share of the users, waits for the common start, then starts each user at their moment
 * (user i of N at t0 + i/N of the window) on their own connection from their source address, runs
 * the flow (e2e/bench/spike-flows.ts) and sends back one record per user and its own CPU time.
 */
import { flows, type FlowContext, type SendResult } from './spike-flows';
import { UserClient } from './user-client';
import type { ClientDone, ClientSetup, UserRecord } from './spike';

const now = () => performance.timeOrigin + performance.now();

async function runUser(s: ClientSetup, t0: number, u: ClientSetup['users'][number], due: number, out: UserRecord[], statuses: Record<string, number>, errors: Record<string, number>): Promise<void> {
  const rec: UserRecord = { index: u.index, dueMs: due - t0, startMs: now() - t0, connectedMs: NaN, firstMs: NaN, finalMs: NaN, status: 0, requests: 0, errors: 0, marks: {} };
  const client = new UserClient({ origin: s.origin, localAddress: s.sources[u.index % s.sources.length], timeoutMs: s.timeoutMs });
  const auth = { authorization: `Bearer ${u.token}` };
  const ctx: FlowContext = {
    user: u,
    path: s.path,
    options: s.options,
    async send(method, path, body, headers): Promise<SendResult> {
      rec.requests++;
      try {
        const r = await client.request(method, path, headers ? { ...auth, ...headers } : auth, body);
        if (Number.isNaN(rec.firstMs)) rec.firstMs = now() - t0;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        return r;
      } catch (err) {
        rec.errors++;
        const code = (err as NodeJS.ErrnoException).code ?? 'ERROR';
        errors[code] = (errors[code] ?? 0) + 1;
        return { status: 0, headers: {}, json: undefined, error: code };
      }
    },
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    mark(step) {
      rec.marks[step] ??= now() - t0;
    },
  };
  try {
    const outcome = await flows[s.flow]!(ctx);
    rec.status = outcome.status;
    if (outcome.code) rec.code = outcome.code;
    if (outcome.position !== undefined) rec.position = outcome.position;
    if (outcome.grabbed) rec.grabbed = true;
    rec.finalMs = now() - t0;
  } finally {
    rec.connectedMs = client.connectedAt + performance.timeOrigin - t0;
    client.close();
    out.push(rec);
  }
}

function start(s: ClientSetup, t0: number): void {
  if (!flows[s.flow]) throw new Error(`no flow "${s.flow}" (have: ${Object.keys(flows).join(', ')})`);
  const records: UserRecord[] = [];
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const cpuBefore = process.cpuUsage();
  const running: Promise<void>[] = [];
  const dueOf = (i: number) => t0 + (i * s.windowMs) / s.total;
  const users = [...s.users].sort((a, b) => a.index - b.index);
  let next = 0;
  // Every user whose moment has come starts now; the timer sleeps until the next one's moment.
  const tick = () => {
    const t = now();
    while (next < users.length && dueOf(users[next]!.index) <= t) {
      const u = users[next++]!;
      running.push(runUser(s, t0, u, dueOf(u.index), records, statuses, errors));
    }
    if (next < users.length) setTimeout(tick, Math.max(0, dueOf(users[next]!.index) - now()));
    else void Promise.all(running).then(finish);
  };
  const finish = () => {
    const cpu = process.cpuUsage(cpuBefore);
    const done: ClientDone = { type: 'done', records, statuses, errors, cpuS: (cpu.user + cpu.system) / 1e6, systemS: cpu.system / 1e6 };
    process.send!(done, () => process.exit(0));
  };
  setTimeout(tick, Math.max(0, t0 - now()));
}

// The bench went away (Ctrl-C, a crash): nobody will read this process's results.
process.on('disconnect', () => process.exit(1));

let setup: ClientSetup | undefined;
process.on('message', (m: ClientSetup | { type: 'go'; t0: number }) => {
  if (m.type === 'setup') {
    setup = m;
    process.send!({ type: 'ready' });
  } else if (m.type === 'go' && setup) start(setup, m.t0);
});
