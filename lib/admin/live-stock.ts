/**
 * The live stock numbers of one flash sale (docs/flash-sale.md#invariants) and their consistency verdict, as the
 * console's live page and GET /api/admin/vouchers/{id}/stock show them. MySQL is read before
 * Redis on purpose: see lib/admin/invariants.ts for why that order makes the verdict sound.
 */
import { redisMemory, saleMemoryBytes } from '@/lib/admin/redis-memory';
import type { RedisClient } from '@/lib/redis/types';
import type { Executor } from '@/lib/db/client';
import { VoucherType } from '@/lib/db/schema';
import { AppError } from '@/lib/errors';
import type { Actor } from '@/lib/access/access';
import { countDeadLetters } from '@/lib/admin/dead-letter.repository';
import { checkInvariants, type Consistency } from '@/lib/admin/invariants';
import { queueDepth } from '@/lib/admin/queue-depth';
import { readSaleSeries, type SaleSeries } from '@/lib/admin/sale-series';
import { readSeckillState } from '@/lib/seckill/state';
import { readSaleNumbers, saleGrabs } from '@/lib/seckill/sale-metrics';
import { roomNumbers } from '@/lib/seckill/room/numbers';
import { findVoucherRow, readDbStock, type VoucherRow } from '@/lib/voucher/voucher.repository';
import { voucherOrderCounts } from '@/lib/order/lifecycle.repository';
import { requireVoucherAccess } from '@/lib/voucher/voucher.service';
import { voucherState } from '@/lib/voucher/voucher.view';

export interface LiveStock {
  voucherId: string;
  title: string;
  state: ReturnType<typeof voucherState>;
  beginTime: string;
  endTime: string;
  numbers: {
    /** Redis (null when not preheated or Redis is unreachable). */
    initial: number | null;
    redisRemaining: number | null;
    buyers: number | null;
    pending: number | null;
    dbInitial: number;
    dbRemaining: number;
    /** Live orders (unpaid, paid, used, refunding). */
    dbOrders: number;
    /** Lifecycle: paid (incl. used), cancelled, refunded orders, and units given back to the sale. */
    paid: number;
    cancelled: number;
    refunded: number;
    returned: number;
    /** Ready messages in the shared orders queue; null when RabbitMQ did not answer. */
    queueDepth: number | null;
    deadLetters: number;
    /** Bytes this sale's Redis keys take, and the whole Redis (null when Redis did not answer). */
    saleMemoryBytes: number | null;
    redisUsedBytes: number | null;
    /** A bucketed sale (docs/buckets.md): each bucket's numbers, and units in a stock move; null for N = 1. */
    buckets: { initial: number; remaining: number; buyers: number; pending: number }[] | null;
    inFlight: number | null;
  };
  /** Per-sale numbers (lib/seckill/sale-metrics.ts, docs/fair-sale.md#per-sale-numbers); null fields when Redis did not answer. */
  sale: {
    reserved: number | null;
    waiting: number | null;
    offersOpen: number | null;
    offered: number | null;
    claimed: number | null;
    expired: number | null;
    grabsAccepted: number;
    grabsRefused: number;
    /**
     * A sale behind a waiting room (docs/fair-sale.md#the-waiting-room): tickets, admitted, users
     * through the bot gate (Redis), proofs of work checked (the web processes' counts); null for a
     * sale without a room, or when Redis did not answer.
     */
    room: { tickets: number; admitted: number; passed: number; solved: number; failed: number } | null;
  };
  consistency: Consistency;
  at: string;
}

/** The voucher row, access-checked, refusing normal vouchers (they have no stock to watch). */
export async function requireSeckillAccess(db: Executor, actor: Actor, id: string): Promise<VoucherRow> {
  const row = await requireVoucherAccess(db, actor, id);
  if (row.type !== VoucherType.SECKILL) throw new AppError('CONFLICT', '普通券没有秒杀库存');
  return row;
}

/** Numbers for an already access-checked voucher (the stream checks once, then ticks). */
export async function readLiveStock(db: Executor, redis: RedisClient, id: string): Promise<LiveStock> {
  const [row, dbStock, deadLetters, depth, lifecycle] = await Promise.all([
    findVoucherRow(db, id),
    readDbStock(db, id),
    countDeadLetters(db, { voucherId: id, status: 'dead' }),
    queueDepth(),
    voucherOrderCounts(db, id),
  ]);
  if (!row || !dbStock || !row.begin_time || !row.end_time) throw new AppError('NOT_FOUND', '秒杀券不存在');
  let redisState: Awaited<ReturnType<typeof readSeckillState>> = null;
  let redisDown = false;
  try {
    redisState = await readSeckillState(redis, id);
  } catch {
    redisDown = true;
  }
  const [saleNumbers, room, grabs] = await Promise.all([
    redisDown ? null : readSaleNumbers(redis, id).catch(() => null),
    redisDown ? null : roomNumbers(redis, id).catch(() => null),
    saleGrabs(id),
  ]);
  const memory = redisDown ? null : await Promise.all([saleMemoryBytes(redis, id), redisMemory(redis)]).then(([sale, all]) => ({ sale, used: all.usedBytes })).catch(() => null);
  const db_ = { initial: dbStock.initial, remaining: dbStock.remaining, orders: dbStock.orders, returnsOwed: dbStock.returnsOwed };
  const window = {
    db: [row.begin_time.getTime(), row.end_time.getTime()] as [number, number],
    redis: redisState?.beginTime && redisState.endTime ? ([Date.parse(redisState.beginTime), Date.parse(redisState.endTime)] as [number, number]) : null,
  };
  const consistency: Consistency = redisDown
    ? { status: 'inconsistent', differences: [{ rule: 'unavailable', message: 'Redis 不可用，无法读取库存' }] }
    : checkInvariants({ redis: redisState, db: db_, queueDepth: depth, deadLetters, window });
  return {
    voucherId: id,
    title: row.title,
    state: voucherState(row, new Date()),
    beginTime: row.begin_time.toISOString(),
    endTime: row.end_time.toISOString(),
    numbers: {
      initial: redisState?.initial ?? null,
      redisRemaining: redisState?.remaining ?? null,
      buyers: redisState?.buyers ?? null,
      pending: redisState?.pending ?? null,
      dbInitial: db_.initial,
      dbRemaining: db_.remaining,
      dbOrders: db_.orders,
      paid: (lifecycle.byStatus[2] ?? 0) + (lifecycle.byStatus[3] ?? 0),
      cancelled: lifecycle.byStatus[4] ?? 0,
      refunded: lifecycle.byStatus[6] ?? 0,
      returned: lifecycle.returned,
      queueDepth: depth,
      deadLetters,
      saleMemoryBytes: memory?.sale ?? null,
      redisUsedBytes: memory?.used ?? null,
      buckets: redisState?.buckets ?? null,
      inFlight: redisState?.inFlight ?? null,
    },
    sale: {
      reserved: saleNumbers?.reserved ?? null,
      waiting: saleNumbers?.waiting ?? null,
      offersOpen: saleNumbers?.offersOpen ?? null,
      offered: saleNumbers?.offered ?? null,
      claimed: saleNumbers?.claimed ?? null,
      expired: saleNumbers?.expired ?? null,
      grabsAccepted: grabs.accepted,
      grabsRefused: grabs.refused,
      room: room && { ...room, solved: grabs.solved, failed: grabs.failed },
    },
    consistency,
    at: new Date().toISOString(),
  };
}

export async function getLiveStock(db: Executor, redis: RedisClient, actor: Actor, id: string): Promise<LiveStock> {
  await requireSeckillAccess(db, actor, id);
  return readLiveStock(db, redis, id);
}

export async function getSaleSeries(db: Executor, redis: RedisClient, stock: LiveStock): Promise<SaleSeries> {
  return readSaleSeries(db, redis, stock.voucherId, stock.state === 'live');
}
