/**
 * The flash-sale invariants (docs/flash-sale.md#invariants) of one flash-sale voucher, as one pure function the live stock page
 * and the tests share:
 *
 *   Redis stock + |buyers| + |offers| = initial   (one Redis read: always exact; offers: docs/fair-sale.md#waitlist)
 *   DB stock + DB orders   = DB initial     (one SQL snapshot: always exact)
 *   |buyers| = DB orders + |pending|        (Redis and DB are read apart: exact only when quiet)
 *   Redis initial = DB initial              (add-stock writes both)
 *
 * The numbers come from two reads at different instants (DB first, then Redis). Orders only
 * ever come from buyers that were already in Redis and buyers only grow, so "DB orders > buyers"
 * is always a real fault (Redis lost buyers → preheat repairs it). Any other gap in the third
 * invariant is explained by orders in flight while something is pending (or, with nothing
 * pending, while the shared queue still holds messages, e.g. replayed dead letters): "draining".
 */

export interface StockNumbers {
  /** Redis state, or null when the voucher was never preheated (or its keys are gone). */
  /** offers: units offered to the waitlist (docs/fair-sale.md#waitlist); inFlight: a bucketed sale's units in a stock move not yet delivered (docs/buckets.md). */
  redis: { initial: number; remaining: number; buyers: number; pending: number; offers?: number; inFlight?: number } | null;
  /** orders = live orders; returnsOwed = units MySQL took back from cancelled/refunded orders that Redis has not yet. */
  db: { initial: number; remaining: number; orders: number; returnsOwed?: number };
  /** Ready messages in the orders queue (all vouchers); null when RabbitMQ could not be asked. */
  queueDepth: number | null;
  /** Dead letters of this voucher still waiting for replay or discard. */
  deadLetters: number;
  /** Sale window (ms) in MySQL and in Redis' meta; a mismatch means an edit did not reach Redis. */
  window?: { db: [number, number]; redis: [number, number] | null };
}

export type ConsistencyStatus = 'consistent' | 'draining' | 'inconsistent';

export interface Difference {
  rule: 'redis-stock' | 'db-stock' | 'buyers-orders' | 'initial' | 'oversold' | 'not-preheated' | 'dead-letters' | 'window' | 'unavailable';
  message: string;
}

export interface Consistency {
  status: ConsistencyStatus;
  /** Broken invariants (inconsistent) or what is still in flight (draining); empty when consistent. */
  differences: Difference[];
}

export function checkInvariants(n: StockNumbers): Consistency {
  const broken: Difference[] = [];
  const { db } = n;

  if (db.remaining + db.orders !== db.initial) {
    broken.push({ rule: 'db-stock', message: `数据库库存 ${db.remaining} + 订单 ${db.orders} ≠ 初始库存 ${db.initial}` });
  }
  if (db.orders > db.initial) {
    broken.push({ rule: 'oversold', message: `超卖：数据库订单 ${db.orders} > 初始库存 ${db.initial}` });
  }
  if (n.deadLetters > 0) {
    broken.push({ rule: 'dead-letters', message: `${n.deadLetters} 条订单消息进入死信，需重放或丢弃` });
  }

  const r = n.redis;
  if (!r) {
    broken.push({ rule: 'not-preheated', message: 'Redis 中没有该券的库存（未预热），请执行预热' });
    return { status: 'inconsistent', differences: broken };
  }

  const offers = r.offers ?? 0;
  if (r.remaining + r.buyers + offers + (r.inFlight ?? 0) !== r.initial) {
    const moving = r.inFlight ? ` + 分桶调拨中 ${r.inFlight}` : '';
    broken.push({ rule: 'redis-stock', message: `Redis 剩余 ${r.remaining} + 买家 ${r.buyers} + 候补名额 ${offers}${moving} ≠ Redis 初始库存 ${r.initial}` });
  }
  if (r.initial !== db.initial) {
    broken.push({ rule: 'initial', message: `Redis 初始库存 ${r.initial} ≠ 数据库初始库存 ${db.initial}` });
  }
  if (r.buyers > r.initial) {
    broken.push({ rule: 'oversold', message: `超卖：买家 ${r.buyers} > 初始库存 ${r.initial}` });
  }
  const w = n.window;
  if (w && (!w.redis || w.redis[0] !== w.db[0] || w.redis[1] !== w.db[1])) {
    broken.push({ rule: 'window', message: 'Redis 中的活动时间与数据库不一致，请执行预热' });
  }
  if (db.orders > r.buyers) {
    broken.push({ rule: 'buyers-orders', message: `数据库订单 ${db.orders} > Redis 买家 ${r.buyers}（Redis 丢失了买家，请预热修复）` });
  }

  if (broken.length > 0) return { status: 'inconsistent', differences: broken };

  // Here orders ≤ buyers. The gap is buyers whose order is neither in MySQL nor pending.
  const gap = r.buyers - db.orders - r.pending;
  const queued = n.queueDepth ?? 0;
  const owed = db.returnsOwed ?? 0;
  if (owed > 0 && gap > 0 && gap <= owed + r.pending) {
    const message = `处理中：${owed} 个已取消/已退款订单的库存正在退回 Redis`;
    return { status: 'draining', differences: [{ rule: 'buyers-orders', message }] };
  }
  if (r.pending > 0 || (gap > 0 && queued > 0)) {
    // The queue is shared by all vouchers, so it only explains a gap, never causes "draining".
    const message = `处理中：待落库 ${r.pending}，队列积压 ${n.queueDepth ?? '未知'}，买家 ${r.buyers} / 已落库订单 ${db.orders}`;
    return { status: 'draining', differences: [{ rule: 'buyers-orders', message }] };
  }
  if (gap > 0) {
    const message = `买家 ${r.buyers} ≠ 订单 ${db.orders} + 待落库 ${r.pending}：${gap} 个买家既没有订单也不在待落库中`;
    return { status: 'inconsistent', differences: [{ rule: 'buyers-orders', message }] };
  }
  return { status: 'consistent', differences: [] };
}
