/**
 * The web processes' metrics for Next's process of a split server (WEB_PART=split,
 * docs/hot-server.md#the-split-server). The grabs are counted in the web processes; the console's
 * pages are rendered in Next's own process, which counts none. Its one line to the others is the
 * IPC channel to the cluster primary: it asks there, the primary sums the web processes
 * (prom-client's AggregatorRegistry, as on WEB_METRICS_PORT) and answers on the same channel. No
 * port is opened for it.
 */
import type { ChildProcess } from 'node:child_process';
import cluster from 'node:cluster';

const ASK = 'hmdp:metrics?';
const ANSWER = 'hmdp:metrics';

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

let nextId = 0;
const waiting = new Map<number, (a: Answer) => void>();
let listening = false;

/** True in Next's process of a split server (started by the primary, with its channel open); never in a web process. */
export function behindSplitPrimary(): boolean {
  return Boolean(!cluster.isWorker && process.env.NEXT_SOCKET && process.send && process.connected);
}

/** In Next's process of a split server: the web processes' metrics summed (Prometheus text); rejects after `timeoutMs`. */
export function metricsFromPrimary(timeoutMs = 1000): Promise<string> {
  if (!behindSplitPrimary()) return Promise.reject(new Error('not behind a split server primary'));
  if (!listening) {
    listening = true;
    process.on('message', (m: unknown) => {
      const a = m as Answer;
      if (a?.type === ANSWER) waiting.get(a.id)?.(a);
    });
  }
  const id = ++nextId;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error('the primary did not answer'));
    }, timeoutMs);
    waiting.set(id, (a) => {
      clearTimeout(timer);
      waiting.delete(id);
      if (a.text !== undefined) resolve(a.text);
      else reject(new Error(a.error ?? 'no metrics'));
    });
    process.send!({ type: ASK, id });
  });
}

/**
 * In the primary: answer `child`'s requests with `source()` (the web processes' metrics summed).
 * One read at a time, its answer reused for `reuseMs`: every open stock stream of the console asks
 * once a second, and each read makes every web process serialise its registry.
 */
export function answerMetricsTo(child: ChildProcess, source: () => Promise<string>, reuseMs = 1000): void {
  let last: { at: number; read: Promise<string> } | null = null;
  const read = () => {
    if (!last || Date.now() - last.at > reuseMs) {
      const at = Date.now();
      const p = source();
      last = { at, read: p };
      // A failed read is not reused.
      p.catch(() => {
        if (last?.read === p) last = null;
      });
    }
    return last.read;
  };
  child.on('message', (m: unknown) => {
    const q = m as { type?: string; id?: unknown };
    if (q?.type !== ASK || typeof q.id !== 'number') return;
    const reply = (a: Omit<Answer, 'type' | 'id'>) => child.connected && child.send({ type: ANSWER, id: q.id, ...a }, () => {});
    read().then(
      (text) => reply({ text }),
      (err: Error) => reply({ error: err.message }),
    );
  });
}
