/** Worker metrics (prom-client), served by the worker on WORKER_METRICS_PORT when set. */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createWorkerMetrics() {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    persisted: new Counter({ name: 'hmdp_orders_persisted_total', help: 'Orders written to MySQL', registers }),
    duplicates: new Counter({ name: 'hmdp_orders_duplicate_total', help: 'Messages whose order already existed (redelivery, republish)', registers }),
    folded: new Counter({ name: 'hmdp_orders_folded_total', help: 'Messages whose buyer already held another order of the voucher: recorded as failed', registers }),
    retried: new Counter({ name: 'hmdp_orders_retried_total', help: 'Messages sent to a retry queue', registers }),
    deadLettered: new Counter({ name: 'hmdp_orders_dead_lettered_total', help: 'Messages moved to dead letters', labelNames: ['kind'] as const, registers }),
    dbStalls: new Counter({ name: 'hmdp_orders_db_stalls_total', help: 'Batch attempts that hit an unreachable or busy database', registers }),
    republished: new Counter({ name: 'hmdp_outbox_republished_total', help: 'Pending orders the sweeper published again', registers }),
    released: new Counter({ name: 'hmdp_outbox_released_total', help: 'Discarded dead letters whose Redis reservation the sweeper gave back', registers }),
    timeoutsScheduled: new Counter({ name: 'hmdp_order_timeouts_scheduled_total', help: 'Persisted orders whose payment timeout the broker confirmed (delay queue)', registers }),
    timeoutsUnscheduled: new Counter({ name: 'hmdp_order_timeouts_unscheduled_total', help: 'Persisted orders whose timeout could not be scheduled: the SQL backstop cancels them', registers }),
    repairs: new Counter({ name: 'hmdp_seckill_repairs_total', help: 'Sales rebuilt from MySQL after Redis may have forgotten writes (per voucher)', labelNames: ['reason'] as const, registers }),
    batchSeconds: new Histogram({
      name: 'hmdp_order_batch_seconds',
      help: 'Time to persist one batch',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    buffered: new Gauge({ name: 'hmdp_order_buffered', help: 'Deliveries waiting for a batch', registers }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/** On `host` only (the process's HOST, like the web server's metrics): queue and payment figures are not for every interface. */
export function serveMetrics(registry: Registry, port: number, host: string, onError: (err: Error) => void): Server {
  collectDefaultMetrics({ register: registry });
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry
      .metrics()
      .then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body))
      .catch(() => res.writeHead(500).end());
  });
  // A busy port (several workers on one host) costs the metrics, never the worker.
  server.on('error', onError);
  server.listen(port, host);
  return server;
}
