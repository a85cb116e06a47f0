/**
 * The bench's ceiling: a bare node:http server answering every request with a constant JSON body
 * of a grab answer's size, in WEB_CONCURRENCY cluster processes like the web server, accepting its
 * connections as the web server would here (workers/accept-policy.ts: one process over a deep
 * kernel queue accepts for itself, as a plain node:http server does). Nothing the product does per
 * request can be faster than this on the same machine.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import { applyAcceptPolicy } from '../../workers/accept-policy';

const port = Number(process.argv[2]);
const processes = Number(process.argv[3] ?? 1);
const body = JSON.stringify({ data: { orderId: '1234567890123456789', status: 'pending' } });

if (cluster.isPrimary) {
  applyAcceptPolicy(processes);
  for (let i = 0; i < processes; i++) cluster.fork();
  let up = 0;
  cluster.on('listening', () => ++up === processes && console.log(`ceiling ready on ${port}`));
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  // Exit rather than die on the signal: a process run with --cpu-prof writes its profile on exit.
  process.on('SIGTERM', () => process.exit(0));
  http
    .createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    })
    .listen({ port, host: '127.0.0.1', backlog: 65535 }); // as the web server (workers/web-server.ts)
}
