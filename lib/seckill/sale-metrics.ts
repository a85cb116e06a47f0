/**
 * Per-sale numbers (issue 25 item 6) for /metrics and the console's live page
 * (docs/fair-sale.md#per-sale-numbers):
 *
 * - grabs accepted / refused, counted in each web process in plain numbers (a Map lookup per grab;
 *   the cluster primary sums the processes like lib/hot/metrics.ts's own counters). Only sales the
 *   grab script answered for are counted (never an unknown voucher id), at most MAX_SALES of them.
 *   A new sale that finds them all taken frees the slots of sales that are over: refused as ENDED,
 *   or not grabbed for IDLE_MS (their series leave /metrics; a counter that comes back restarts at 0,
 *   which rate() reads as a reset). Without it the first MAX_SALES sales a process saw kept their
 *   slots for good, and a process running for weeks counted no new sale again.
 * - reserved, waiting, offers open and offers offered / claimed / expired, read from Redis when
 *   scraped, for the sales the outbox sweeper knows (`seckill:active`): the same in every process,
 *   so the cluster keeps the first process's value instead of a sum.
 *
 * Other per-sale numbers (the waiting room's) belong here too: add a gauge to `redisGauges`.
 */
import { register } from 'prom-client';
import type { RedisClient } from '@/lib/redis/types';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { redis as defaultRedis } from '@/lib/redis/client';
import { waitlistNumbers, type WaitlistNumbers } from '@/lib/seckill/waitlist/numbers';
import { behindSplitPrimary, metricsFromPrimary } from '@/lib/hot/primary-metrics';

export const MAX_SALES = 1000;
/** A sale not grabbed for this long gives its slot to a new one (only when every slot is taken). */
export const IDLE_MS = 60 * 60_000;
/** After a look found no slot to free, none again for this long: a table full of live sales costs a new sale's grabs no scan each. */
const FREE_EVERY_MS = 1000;
/** Most sales one scrape reads from Redis. */
const MAX_SCRAPED = 200;

export type GrabOutcome = 'accepted' | 'refused';
interface SaleCount {
  accepted: number;
  refused: number;
  /** Bot-gate proofs of work checked for this sale (the room's, the waitlist's): passed, not passed. */
  solved: number;
  failed: number;
  /** Last grab or proof counted (ms). */
  at: number;
  /** Its last answer was ENDED: the sale is over. */
  ended: boolean;
}
// On globalThis: the hot server (tsx) and Next's bundle each load their own copy of this module in
// the one web process, and the console (Next) must read the counts the grab route (hot) made.
const g = globalThis as unknown as { __hmdpSaleGrabs?: Map<string, SaleCount>; __hmdpSaleGrabsFullAt?: number };
const grabs = (g.__hmdpSaleGrabs ??= new Map());

/** The sale's counts, made if there is a slot for it (undefined when every slot holds a live sale). */
function countOf(voucherId: string, now: number): SaleCount | undefined {
  let c = grabs.get(voucherId);
  if (!c) {
    if (grabs.size >= MAX_SALES && freeSlots(now) === 0) return undefined;
    grabs.set(voucherId, (c = { accepted: 0, refused: 0, solved: 0, failed: 0, at: now, ended: false }));
  }
  c.at = now;
  return c;
}

/** `ended`: the answer was ENDED (the sale is over: its slot may go to a new sale). */
export function countSaleGrab(voucherId: string, outcome: GrabOutcome, ended = false, now = Date.now()): void {
  const c = countOf(voucherId, now);
  if (!c) return;
  c[outcome]++;
  c.ended = ended; // the last answer decides: a sale whose end was moved later answers again
}

/**
 * A proof of work the gate script checked for this sale. `saleFound`: the caller's look found the
 * sale in Redis; otherwise (a waitlist join checks the proof before its script finds the sale) only
 * a sale already counted here is counted, so junk voucher ids cannot take the slots.
 */
export function countSaleChallenge(voucherId: string, solved: boolean, saleFound: boolean, now = Date.now()): void {
  if (!saleFound && !grabs.has(voucherId)) return;
  const c = countOf(voucherId, now);
  if (c) c[solved ? 'solved' : 'failed']++;
}

/** Forgets the sales that are over (ended, or idle for IDLE_MS); a sale grabbed in the last IDLE_MS and not ended is never dropped. */
function freeSlots(now: number): number {
  if (now - (g.__hmdpSaleGrabsFullAt ?? -Infinity) < FREE_EVERY_MS) return 0;
  let freed = 0;
  for (const [voucher, c] of grabs) {
    if (c.ended || now - c.at >= IDLE_MS) {
      grabs.delete(voucher);
      freed++;
    }
  }
  if (freed === 0) g.__hmdpSaleGrabsFullAt = now;
  return freed;
}

/** A sale's counts in the web processes: grabs answered, and bot-gate proofs checked. */
export interface SaleCounts {
  accepted: number;
  refused: number;
  solved: number;
  failed: number;
}

/** This process's counts of one sale. */
export function localSaleGrabs(voucherId: string): SaleCounts {
  const c = grabs.get(voucherId);
  return { accepted: c?.accepted ?? 0, refused: c?.refused ?? 0, solved: c?.solved ?? 0, failed: c?.failed ?? 0 };
}

const GRABS = 'hmdp_sale_grabs_total';
const CHALLENGES = 'hmdp_sale_challenges_total';

/**
 * A counter of the per-sale counts by outcome, read from `grabs` when scraped (prom-client's
 * custom-metric shape: the primary sums it over the web processes). `shown`: which sales have a series.
 */
function saleCounter<O extends keyof SaleCounts>(name: string, help: string, outcomes: [O, O], shown: (c: SaleCount) => boolean, reset: () => void) {
  const base = { name, help, type: 'counter' as const, aggregator: 'sum' as const };
  return {
    ...base,
    get: async () => ({
      ...base,
      values: [...grabs].filter(([, c]) => shown(c)).flatMap(([voucher, c]) => outcomes.map((outcome) => ({ labels: { voucher, outcome }, value: c[outcome] }))),
    }),
    reset,
  };
}

const grabsMetric = saleCounter(
  GRABS,
  'Grabs of a flash sale answered by its script or from refusal memory, by outcome (accepted / refused)',
  ['accepted', 'refused'],
  () => true,
  () => {
    grabs.clear();
    g.__hmdpSaleGrabsFullAt = undefined;
  },
);

/** Per sale, as the room's global hmdp_room_challenges_total: only sales that had a proof checked. */
const challengesMetric = saleCounter(
  CHALLENGES,
  'Bot-gate proofs of work checked for a flash sale, by outcome (solved / failed)',
  ['solved', 'failed'],
  (c) => c.solved + c.failed > 0,
  // The counts live in `grabs`, which grabsMetric's reset clears.
  () => {},
);

export interface SaleNumbers extends WaitlistNumbers {
  reserved: number;
}

export async function readSaleNumbers(redis: RedisClient, voucherId: string): Promise<SaleNumbers> {
  const [w, reserved] = await Promise.all([waitlistNumbers(redis, voucherId), redis.scard(keys.seckillReserved(voucherId))]);
  return { ...w, reserved };
}

const redisGauges: { name: string; help: string; values: (n: SaleNumbers) => [Record<string, string>, number][] }[] = [
  { name: 'hmdp_sale_reserved', help: 'Users holding a reservation of a reservation-only sale', values: (n) => [[{}, n.reserved]] },
  { name: 'hmdp_sale_waitlist', help: 'Users on a sold-out sale’s waitlist', values: (n) => [[{}, n.waiting]] },
  { name: 'hmdp_sale_offers_open', help: 'Returned units offered to waiting users, not yet claimed or expired', values: (n) => [[{}, n.offersOpen]] },
  {
    name: 'hmdp_sale_offers_total',
    help: 'Waitlist offers of a sale by outcome: offered, claimed, expired',
    values: (n) => [
      [{ outcome: 'offered' }, n.offered],
      [{ outcome: 'claimed' }, n.claimed],
      [{ outcome: 'expired' }, n.expired],
    ],
  },
];

// One Redis read per scrape serves every gauge: the first gauge's get() starts it, the others share it.
let scrape: { at: number; p: Promise<[string, SaleNumbers][]> } | undefined;
function scrapeSales(redis: RedisClient): Promise<[string, SaleNumbers][]> {
  if (scrape && Date.now() - scrape.at < 500) return scrape.p;
  const p = (async () => {
    // The newest sales when there are more than MAX_SCRAPED (ids grow with time; a set's order is
    // arbitrary, so a plain slice dropped a live sale once many ended ones were still listed).
    const byNewest = (a: string, b: string) => b.length - a.length || (a < b ? 1 : a > b ? -1 : 0);
    const vids = (await redis.smembers(keys.seckillActive())).sort(byNewest).slice(0, MAX_SCRAPED);
    return Promise.all(vids.map(async (v) => [v, await readSaleNumbers(redis, v)] as [string, SaleNumbers]));
  })();
  scrape = { at: Date.now(), p };
  return p;
}

const gaugeMetrics = redisGauges.map((g) => ({
  name: g.name,
  help: g.help,
  type: g.name.endsWith('_total') ? ('counter' as const) : ('gauge' as const),
  aggregator: 'first' as const,
  get: async () => {
    const sales = await scrapeSales(defaultRedis).catch(() => []);
    return {
      name: g.name,
      help: g.help,
      type: g.name.endsWith('_total') ? 'counter' : 'gauge',
      aggregator: 'first',
      values: sales.flatMap(([voucher, n]) => g.values(n).map(([labels, value]) => ({ labels: { voucher, ...labels }, value }))),
    };
  },
  reset: () => {},
}));

for (const m of [grabsMetric, challengesMetric, ...gaugeMetrics]) {
  // A second import of this module (tests, dev reloads) finds them registered already.
  if (!register.getSingleMetric(m.name)) register.registerMetric(m as unknown as Parameters<typeof register.registerMetric>[0]);
}

/** Next's process of a split server: the last sum the primary gave. */
let lastFromPrimary: { at: number; text: string } | null = null;

/**
 * A sale's counts (grabs, proofs of work) over every web process: from the primary's /metrics (WEB_METRICS_PORT) when
 * there is one; else, in Next's process of a split server (which answers no grab itself), from the
 * primary over its IPC channel; else this process's own (one web process: the same numbers).
 */
export async function saleGrabs(voucherId: string, port = env.WEB_METRICS_PORT): Promise<SaleCounts> {
  try {
    if (port) {
      const host = env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
      const res = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`, { signal: AbortSignal.timeout(1000), cache: 'no-store' });
      return saleGrabsIn(await res.text(), voucherId);
    }
    if (behindSplitPrimary()) {
      const text = await metricsFromPrimary().then(
        (t) => (lastFromPrimary = { at: Date.now(), text: t }).text,
        // A web process busy in a spike, or starting: the last sum read, for a while; this process
        // (Next's) counts no grab, so its own would be 0.
        (err: unknown) => (lastFromPrimary && Date.now() - lastFromPrimary.at < 60_000 ? lastFromPrimary.text : Promise.reject(err)),
      );
      return saleGrabsIn(text, voucherId);
    }
  } catch {
    // the metrics could not be read: this process's own, as without a port
  }
  return localSaleGrabs(voucherId);
}

/** A sale's counts in Prometheus text (a process's or the cluster's sum). */
function saleGrabsIn(text: string, voucherId: string): SaleCounts {
  const out = { accepted: 0, refused: 0, solved: 0, failed: 0 };
  const re = new RegExp(`^(${GRABS}|${CHALLENGES})\\{([^}]*)\\} (\\d+)`, 'gm');
  for (const m of text.matchAll(re)) {
    const labels = m[2]!;
    if (!labels.includes(`voucher="${voucherId}"`)) continue;
    const outcome = /outcome="(\w+)"/.exec(labels)?.[1];
    const known = m[1] === GRABS ? outcome === 'accepted' || outcome === 'refused' : outcome === 'solved' || outcome === 'failed';
    if (known) out[outcome as keyof SaleCounts] += Number(m[3]);
  }
  return out;
}
