/**
 * Web-side metrics of the hot routes (prom-client): requests and latency by route and outcome.
 * Each web process counts on prom-client's global registry; the cluster primary serves the sum
 * over all processes (AggregatorRegistry) on WEB_METRICS_PORT, a port that is not the public one.
 */
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, Counter, Histogram, register } from 'prom-client';
import type { Observe } from '@/lib/hot/server';

const requests = new Counter({ name: 'hmdp_hot_requests_total', help: 'Hot-route requests answered, by route and outcome', labelNames: ['route', 'outcome'] as const, registers: [register] });
const seconds = new Histogram({
  name: 'hmdp_hot_request_seconds',
  help: 'Hot-route latency inside the web process, by route and outcome',
  labelNames: ['route', 'outcome'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers: [register],
});

/** accepted, sold_out, already_bought, limited, shed, error, or ok / refused for other answers. */
export function outcomeOf(route: string, status: number, code: string | undefined): string {
  if (code === 'SHED') return 'shed';
  if (status >= 500) return 'error';
  if (status === 429) return 'limited';
  if (code === 'SOLD_OUT') return 'sold_out';
  if (code === 'ALREADY_BOUGHT') return 'already_bought';
  if (status < 400) return route === 'grab' ? 'accepted' : 'ok';
  return 'refused';
}

export const observeHotRoute: Observe = (route, status, s, code) => {
  const outcome = outcomeOf(route, status, code);
  requests.inc({ route, outcome });
  seconds.observe({ route, outcome }, s);
};

/** In each web process: answer the primary's requests for this process's metrics (prom-client installs the listener with an AggregatorRegistry). */
export function answerClusterMetrics(): void {
  new AggregatorRegistry();
}

/** In the cluster primary: GET /metrics answers the sum over every web process. */
export function serveClusterMetrics(port: number, host: string): Server {
  const aggregator = new AggregatorRegistry();
  return createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.statusCode = 404;
      res.end();
      return;
    }
    aggregator.clusterMetrics().then(
      (text) => {
        res.setHeader('content-type', aggregator.contentType);
        res.end(text);
      },
      (err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      },
    );
  }).listen(port, host);
}
