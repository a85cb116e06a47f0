/**
 * More than one connection taken in per turn of a web process's event loop, when it accepts for
 * itself (workers/accept-policy.ts, node:cluster's SCHED_NONE).
 *
 * libuv as node 20 ships it (1.46) accepts one connection per listening handle per turn of the loop. A web
 * process busy with a sale has long turns (its buyers' Redis replies, their answers), so it took in
 * ~450 connections/s while 19 000 waited in the kernel's queue (sampled with `ss -ltn` through a
 * 20 000-user room spike): the crowd could not be told anything until the sale was over, and its
 * answers came after the sale's instead of beside them (docs/hot-server.md#more-than-one-accept-per-turn).
 * A 2 ms-per-turn process measured here took in 1 166 of 5 000 connections in 2.5 s; with 15 more
 * handles on the same socket, all 5 000.
 *
 * The same listening socket under more handles: the web process sends its listening handle to the
 * primary, which sends it back `copies` times (each passage over the IPC channel is a new file
 * descriptor for the same socket); each becomes a plain net.Server whose connections go to the
 * web server's own 'connection' listeners, as if it had accepted them. The kernel still has one
 * queue, so nothing is reordered or balanced; each turn of the loop now takes up to copies + 1.
 * Only for a process accepting for itself: under round-robin the primary hands connections out.
 */
import type { Worker } from 'node:cluster';
import net from 'node:net';
import type http from 'node:http';

const ASK = 'hmdp:listen-copies';
const COPY = 'hmdp:listen-copy';
/** The env var through which the primary tells a web process how many copies to ask for (0: none). */
export const COPIES_ENV = 'HMDP_LISTEN_COPIES';

/** The primary: answers a web process's request with `n` copies of the handle it sent. */
export function answerListenCopies(worker: Worker): void {
  worker.on('message', (m: unknown, handle?: unknown) => {
    const ask = m as { cmd?: unknown; n?: unknown } | null;
    if (ask?.cmd !== ASK || !handle || typeof ask.n !== 'number') return;
    const h = handle as { close(): void };
    let left = Math.min(64, Math.max(0, Math.floor(ask.n)));
    if (left === 0) return h.close();
    // The primary's own descriptor is closed once the last copy is on its way.
    for (let i = 0, n = left; i < n; i++) worker.send({ cmd: COPY }, h as never, () => --left === 0 && h.close());
  });
}

/** The copies a web process listens on: `made` as they arrive (close them when the server stops), `all` once every one asked for has. */
export interface ListenCopies {
  made: net.Server[];
  all: Promise<void>;
}

/** net.Server's own count of its open connections, and a socket's pointer to the server that counts it. */
type Counted = { _connections?: number };

/**
 * A web process: once `server` listens, asks the primary for `copies` more handles on its socket
 * and serves their connections as its own; none when not asked for or not possible here (not a
 * cluster worker, or a server whose handle is not a listening TCP socket of its own).
 */
export function listenCopies(server: http.Server, copies: number, backlog: number): ListenCopies {
  const made: net.Server[] = [];
  const handle = (server as unknown as { _handle?: { constructor?: { name?: string } } })._handle;
  if (copies <= 0 || !process.send || handle?.constructor?.name !== 'TCP') return { made, all: Promise.resolve() };
  const all = new Promise<void>((resolve) => {
    const onMessage = (m: unknown, copy?: unknown) => {
      if ((m as { cmd?: unknown } | null)?.cmd !== COPY || !copy) return;
      // Arrived after the server stopped: not listened on.
      if (!server.listening) return void (copy as { close(): void }).close();
      // As http.Server makes its sockets (half-open allowed, no Nagle), so node:http's listener
      // takes them as its own.
      const s = net.createServer({ allowHalfOpen: true, noDelay: true });
      s.on('connection', (socket) => {
        // Counted as the web server's own connection, not the copy's (net.Server's private count
        // and the socket's pointer to it, which its close decrements): the server's close then
        // waits for every connection, as it did with one handle, and so do the sweeps that stop
        // at its 'close' (the idle sweep, the known-answer door's).
        const from = s as unknown as Counted;
        const to = server as unknown as Counted;
        if (typeof from._connections === 'number' && typeof to._connections === 'number') {
          from._connections--;
          to._connections++;
          Object.assign(socket, { _server: server, server });
        }
        server.emit('connection', socket);
      });
      s.on('error', (err) => server.emit('error', err));
      // listen() again on a listening socket only sets its queue: the same deep one.
      s.listen(copy as net.Server, backlog);
      made.push(s);
      if (made.length === copies) {
        process.off('message', onMessage);
        resolve();
      }
    };
    process.on('message', onMessage);
    process.send!({ cmd: ASK, n: copies }, handle as never);
  });
  return { made, all };
}
