/**
 * A node:cluster primary with one web-like process accepting for itself (SCHED_NONE) whose every
 * turn of the event loop takes ~2 ms (as a web process busy with a sale), for
 * workers/listen-copies.test.ts. The process asks for COPIES more handles on its socket
 * (workers/listen-copies.ts), then prints one JSON line, {"ready":port}, and, once the parent's flood
 * has had WINDOW_MS, {"accepted":n}: the connections it took in. KEEP=1: it keeps them open and
 * then prints {"counted":n} too: the open connections node:http's server counts as its own.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerListenCopies, listenCopies } from '@/workers/listen-copies';

const copies = Number(process.env.COPIES ?? 0);
const windowMs = Number(process.env.WINDOW_MS ?? 2500);
const keep = process.env.KEEP === '1';

if (cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const worker = cluster.fork();
  answerListenCopies(worker);
  worker.on('exit', (code) => process.exit(code ?? 1));
} else {
  let accepted = 0;
  const server = http.createServer();
  server.on('connection', (socket) => {
    accepted++;
    if (!keep) socket.destroy();
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 65535 }, () => {
    const { made, all } = listenCopies(server, copies, 65535);
    void all.then(() => {
      if (made.length !== copies) throw new Error(`asked for ${copies} copies, got ${made.length}`);
      const busy = () => {
        const until = performance.now() + 2;
        while (performance.now() < until);
        setImmediate(busy);
      };
      setImmediate(busy);
      console.log(JSON.stringify({ ready: (server.address() as AddressInfo).port }));
      // The window runs from the parent's word; the count from the start (the parent's flood, which
      // may reach the socket before its word is read here, is all there is).
      process.stdin.once('data', () => {
        setTimeout(() => {
          console.log(JSON.stringify({ accepted }));
          if (!keep) process.exit(0);
          server.getConnections((_, counted) => {
            console.log(JSON.stringify({ counted }));
            process.exit(0);
          });
        }, windowMs);
      });
    });
  });
}
