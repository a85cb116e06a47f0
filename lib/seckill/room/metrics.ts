/**
 * The waiting room's metrics in /metrics (prom-client's global registry; the web cluster's primary
 * sums the counters over the processes): tickets issued, the room's size and its serving counter
 * per sale (rate(hmdp_room_served[1m]) is admitted/s), grab tokens issued, and the bot gate's
 * challenges solved and failed, joins told 名额已满, and the looks parked in this process. The per-sale gauges are what Redis said at this process's last
 * look, so the processes agree and the primary keeps the largest; at most MAX_SALES sales. A new sale
 * that finds them all taken frees the slots of sales that are over (past their end, or not looked
 * at for IDLE_MS) and removes their series; without that the first MAX_SALES room sales a process
 * saw kept their slots for good and no later room showed up in /metrics.
 */
import { Counter, Gauge, register } from 'prom-client';

export const MAX_SALES = 100;
/** A room sale not looked at for this long gives its slot to a new one (only when every slot is taken). */
export const IDLE_MS = 60 * 60_000;

function counter<L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> {
  return (register.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [register] });
}

function gauge(name: string, help: string): Gauge<'voucher'> {
  return (register.getSingleMetric(name) as Gauge<'voucher'> | undefined) ?? new Gauge({ name, help, labelNames: ['voucher'], aggregator: 'max', registers: [register] });
}

const joinedTotal = counter('hmdp_room_joined_total', 'Waiting-room tickets issued (first joins)');
const autoOpenedTotal = counter('hmdp_room_auto_opened_total', 'Times a process opened or extended an ordinary sale\'s waiting room because it was shedding its grabs');
const tokensTotal = counter('hmdp_room_grab_tokens_total', 'Grab tokens issued to admitted users who passed the bot gate (a buy on admission counts one: its grab mints and spends it in one call)');
const challengesTotal = counter('hmdp_room_challenges_total', 'Bot-gate proofs of work checked, by outcome (solved, failed)', ['outcome']);
/**
 * Joins told 名额已满 (docs/fair-sale.md#every-unit-spoken-for), by where the answer came from. The
 * memory's count is a plain number (a crowd's newcomers hear it on the door's cheapest path, where
 * prom-client's labelled inc() would cost more than the answer), copied into the counter when read.
 */
const fullCounts = ((globalThis as { __hmdpRoomFull?: { redis: number; memory: number } }).__hmdpRoomFull ??= { redis: 0, memory: 0 });
const fullName = 'hmdp_room_full_total';
if (!register.getSingleMetric(fullName)) {
  new Counter({
    name: fullName,
    help: 'Joins refused because every unit was spoken for (名额已满), by where the answer came from (redis: the look script; memory: this process remembered the room full)',
    labelNames: ['source'] as const,
    registers: [register],
    collect() {
      this.reset();
      for (const source of ['redis', 'memory'] as const) this.inc({ source }, fullCounts[source]);
    },
  });
}
const inRoom = gauge('hmdp_room_waiting', 'Tickets of a room sale not yet admitted');
const served = gauge('hmdp_room_served', 'Positions a room sale has admitted so far (its rate is admitted/s)');
const parked =
  (register.getSingleMetric('hmdp_room_parked_looks') as Gauge | undefined) ??
  new Gauge({ name: 'hmdp_room_parked_looks', help: 'Waiting looks held in the web processes until their moment (long polls, docs/fair-sale.md#waiting-without-polling)', aggregator: 'sum', registers: [register] });

/** voucher → when this process last looked at its room, and the sale's end (ms). */
const sales = new Map<string, { at: number; end: number }>();

/** Removes the series of sales that are over (ended, or not looked at for IDLE_MS); a live sale looked at lately is never dropped. */
function freeSlots(now: number): number {
  let freed = 0;
  for (const [voucher, s] of sales) {
    if ((s.end > 0 && s.end <= now) || now - s.at >= IDLE_MS) {
      sales.delete(voucher);
      inRoom.remove({ voucher });
      served.remove({ voucher });
      freed++;
    }
  }
  return freed;
}

export const roomMetrics = {
  joined: () => joinedTotal.inc(),
  tokenIssued: () => tokensTotal.inc(),
  autoOpened: () => autoOpenedTotal.inc(),
  /** A join told 名额已满: by the look script (`redis`) or from this process's memory. */
  full: (source: 'redis' | 'memory') => void fullCounts[source]++,
  challenge: (ok: boolean) => challengesTotal.inc({ outcome: ok ? 'solved' : 'failed' }),
  parkedLooks: (n: number) => parked.set(n),
  /** `end`: the sale's end (ms; 0 when unknown). A look is never on the grab's hot path: a scan of MAX_SALES when full costs nothing that counts. */
  observe(voucherId: string, issued: number, admitted: number, end = 0, now = Date.now()): void {
    const s = sales.get(voucherId);
    if (s) {
      s.at = now;
      s.end = end;
    } else {
      if (sales.size >= MAX_SALES && freeSlots(now) === 0) return;
      sales.set(voucherId, { at: now, end });
    }
    inRoom.set({ voucher: voucherId }, Math.max(0, issued - admitted));
    served.set({ voucher: voucherId }, admitted);
  },
};
