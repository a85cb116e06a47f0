/**
 * Automatic repair after Redis may have forgotten writes (docs/redis-cluster.md#automatic-repair). A
 * Redis that restarts comes back with only what it persisted (everything, the last second, or
 * nothing), and a Cluster failover promotes a replica that may lack the master's last writes:
 * grabs Redis answered 200 are then no longer buyers, and their units are back on sale. MySQL
 * still gets those orders (they were published to RabbitMQ), so the fix is preheatVoucher:
 * buyers unioned in from MySQL, remaining = initial − |buyers|, atomic and safe mid-sale.
 *
 * How we notice: a fingerprint of the Redis we talk to — each serving server's `run_id` (new at
 * every start) and, on a Cluster, which master serves each slot range (new on a failover). It is
 * checked every REDIS_REPAIR_CHECK_MS and whenever the client (re)connects; a change schedules a
 * repair of every live sale at REDIS_REPAIR_DELAYS_MS (default at once, +5 s, +30 s): the
 * forgotten orders still in the queue reach MySQL only when the worker drains them, and a
 * repair only knows the buyers MySQL has.
 *
 * No lock between workers: each repair takes the voucher's MySQL row lock (preheat), so repairs
 * of one voucher serialize, and a second one is an idempotent no-op.
 */
import { Cluster } from 'ioredis';
import type { Counter } from 'prom-client';
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';
import type { RedisClient } from '@/lib/redis/types';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { unendedSaleIds } from '@/lib/seckill/seckill.repository';
import { readSeckillState } from '@/lib/seckill/state';

export type RepairReason = 'restart' | 'failover';

export interface RedisRepairOptions {
  db: Executor;
  redis: RedisClient;
  checkMs?: number;
  delaysMs?: number[];
  repairs?: Counter<'reason'>;
}

export interface RedisRepair {
  /** Compares the fingerprint now; returns the reason when it changed (a repair is then scheduled). */
  checkNow(): Promise<RepairReason | null>;
  /** Repairs every live sale now; resolves to the number of vouchers repaired. */
  repairNow(reason: RepairReason): Promise<number>;
  stop(): void;
}

interface Fingerprint {
  /** Slot range → serving master's node id ('' on a single server). */
  owners: Map<string, string>;
  /** Serving server address → run_id. */
  runIds: Map<string, string>;
}

const runIdOf = (info: string) => /run_id:(\w+)/.exec(info)?.[1] ?? '';
const CALL_TIMEOUT_MS = 1000;

/** A node that is dead, stopped or mid-failover must not hang the check (ioredis would queue the call). */
function within<T>(p: Promise<T>, ms = CALL_TIMEOUT_MS): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    t.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(t));
}

/** The Redis we talk to, as identities: throws when it cannot be read whole (then no verdict). */
export async function redisFingerprint(redis: RedisClient): Promise<Fingerprint> {
  if (!(redis instanceof Cluster)) {
    return { owners: new Map([['all', '']]), runIds: new Map([['server', runIdOf(await within(redis.info('server')))]]) };
  }
  // The slot map as the first node that answers sees it (not a random one, which may be the dead master).
  let slots: [number, number, [string, number, string?]][] | undefined;
  for (const node of redis.nodes('all')) {
    slots = await within(node.cluster('SLOTS') as Promise<unknown>).then((x) => x as typeof slots, () => undefined);
    if (slots) break;
  }
  if (!slots) throw new Error('no node answers CLUSTER SLOTS');
  const owners = new Map<string, string>();
  const addrs = new Set<string>();
  for (const [a, b, [host, port, id]] of slots) {
    owners.set(`${a}-${b}`, id ?? `${host}:${port}`);
    addrs.add(`${host}:${port}`);
  }
  const byAddr = new Map(redis.nodes('all').map((n) => [`${n.options.host}:${n.options.port}`, n]));
  const runIds = new Map<string, string>();
  for (const addr of addrs) {
    const node = byAddr.get(addr);
    if (!node) throw new Error(`no connection to ${addr} yet`);
    runIds.set(addr, runIdOf(await within(node.info('server'))));
  }
  return { owners, runIds };
}

/** Why b is not a: a slot range changed masters (failover) or a server restarted; null when equal. */
export function changeBetween(a: Fingerprint, b: Fingerprint): RepairReason | null {
  const same = (x: Map<string, string>, y: Map<string, string>) => x.size === y.size && [...x].every(([k, v]) => y.get(k) === v);
  if (!same(a.owners, b.owners)) return 'failover';
  // A server that is new to us (a promoted replica) changes the owners too; here only restarts remain.
  return same(a.runIds, b.runIds) ? null : 'restart';
}

export function startRedisRepair(options: RedisRepairOptions): RedisRepair {
  const { db, redis, repairs } = options;
  const checkMs = options.checkMs ?? env.REDIS_REPAIR_CHECK_MS;
  const delaysMs = options.delaysMs ?? env.REDIS_REPAIR_DELAYS_MS;
  let known: Fingerprint | undefined;
  let checking: Promise<RepairReason | null> | undefined;
  let stopped = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let round: NodeJS.Timeout[] = [];
  let repairing = Promise.resolve(0);

  async function repairNow(reason: RepairReason): Promise<number> {
    const active = await redis.smembers(keys.seckillActive()).catch(() => [] as string[]);
    const ids = await unendedSaleIds(db, new Date(), active);
    let n = 0;
    for (const voucherId of ids) {
      try {
        const before = await readSeckillState(redis, voucherId);
        const after = await preheatVoucher(db, redis, voucherId);
        repairs?.inc({ reason });
        n++;
        log.warn(
          { voucherId, reason, before: before && { remaining: before.remaining, buyers: before.buyers }, after: { remaining: after.remaining, buyers: after.buyers } },
          `redis repair: voucher ${voucherId} remaining ${before?.remaining ?? '∅'} → ${after.remaining}, buyers ${before?.buyers ?? '∅'} → ${after.buyers} (${reason})`,
        );
      } catch (err) {
        log.warn({ err: (err as Error).message, voucherId, reason }, 'redis repair of a voucher failed; the next round retries');
      }
    }
    return n;
  }

  function schedule(reason: RepairReason): void {
    // A newer change restarts the schedule: the later rounds must come after the last change.
    round.forEach(clearTimeout);
    round = delaysMs.map((ms) =>
      setTimeout(() => {
        repairing = repairing.then(() => repairNow(reason)).catch((err: Error) => (log.warn({ err: err.message }, 'redis repair failed'), 0));
      }, ms),
    );
  }

  function checkNow(): Promise<RepairReason | null> {
    if (checking) return checking;
    checking = redisFingerprint(redis)
      .then((now) => {
        const reason = known ? changeBetween(known, now) : null;
        known = now;
        if (reason && !stopped) {
          log.warn({ reason }, 'redis may have forgotten writes; repairing every live sale from MySQL');
          schedule(reason);
        }
        return reason;
      })
      .catch(() => null) // unreachable or mid-failover: the next check decides
      .finally(() => {
        checking = undefined;
      });
    return checking;
  }

  const onEvent = () => void checkNow();
  const events = redis instanceof Cluster ? ['ready', '+node', '-node'] : ['ready'];
  for (const e of events) redis.on(e, onEvent);
  const poll = () => {
    if (stopped) return;
    pollTimer = setTimeout(() => void checkNow().finally(poll), checkMs);
  };
  if (checkMs > 0) {
    void checkNow();
    poll();
  }

  return {
    checkNow,
    repairNow,
    stop() {
      stopped = true;
      clearTimeout(pollTimer);
      round.forEach(clearTimeout);
      for (const e of events) redis.off(e, onEvent);
    },
  };
}
