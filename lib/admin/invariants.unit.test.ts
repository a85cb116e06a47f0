import { describe, expect, it } from 'vitest';
import { checkInvariants, type StockNumbers } from '@/lib/admin/invariants';

/** A drained sale of 100 with 40 sold, everything in agreement. */
function numbers(over: { redis?: Partial<NonNullable<StockNumbers['redis']>> | null; db?: Partial<StockNumbers['db']>; queueDepth?: number | null; deadLetters?: number } = {}): StockNumbers {
  return {
    redis: over.redis === null ? null : { initial: 100, remaining: 60, buyers: 40, pending: 0, ...over.redis },
    db: { initial: 100, remaining: 60, orders: 40, ...over.db },
    queueDepth: over.queueDepth === undefined ? 0 : over.queueDepth,
    deadLetters: over.deadLetters ?? 0,
  };
}
const rules = (n: StockNumbers) => checkInvariants(n).differences.map((d) => d.rule);

describe('checkInvariants', () => {
  it('a drained sale whose numbers agree is consistent', () => {
    expect(checkInvariants(numbers())).toEqual({ status: 'consistent', differences: [] });
    expect(checkInvariants(numbers({ redis: { remaining: 100, buyers: 0 }, db: { remaining: 100, orders: 0 } })).status).toBe('consistent');
  });

  it('orders still pending in Redis: draining, not broken', () => {
    const n = numbers({ redis: { pending: 5 }, db: { orders: 35, remaining: 65 } });
    const c = checkInvariants(n);
    expect(c.status).toBe('draining');
    expect(c.differences[0]?.message).toContain('待落库 5');
  });

  it('a gap with nothing pending but messages queued (replayed dead letters) is draining', () => {
    const n = numbers({ db: { orders: 38, remaining: 62 }, queueDepth: 3 });
    expect(checkInvariants(n).status).toBe('draining');
  });

  it('cancelled orders whose unit MySQL took back but Redis not yet: draining while owed, inconsistent beyond it', () => {
    // 2 orders cancelled: DB has them back (38 live, 62 left); Redis still counts their buyers.
    const owed = numbers({ db: { orders: 38, remaining: 62, returnsOwed: 2 } });
    expect(checkInvariants(owed).status).toBe('draining');
    expect(checkInvariants(owed).differences[0]?.message).toContain('退回 Redis');
    expect(checkInvariants(numbers({ db: { orders: 37, remaining: 63, returnsOwed: 2 } })).status).toBe('inconsistent');
    // Once returned in Redis too (buyer removed, stock back), the numbers agree again.
    expect(checkInvariants(numbers({ redis: { remaining: 62, buyers: 38 }, db: { orders: 38, remaining: 62, returnsOwed: 0 } })).status).toBe('consistent');
  });

  it("other vouchers' queued messages do not make a balanced voucher draining", () => {
    expect(checkInvariants(numbers({ queueDepth: 500 })).status).toBe('consistent');
  });

  it('buyers without order or pending entry once quiet → inconsistent, naming the gap', () => {
    const c = checkInvariants(numbers({ db: { orders: 37, remaining: 63 } }));
    expect(c.status).toBe('inconsistent');
    expect(c.differences[0]?.message).toContain('3 个买家');
    // Unknown queue depth (RabbitMQ down) cannot excuse the gap either.
    expect(checkInvariants(numbers({ db: { orders: 37, remaining: 63 }, queueDepth: null })).status).toBe('inconsistent');
  });

  it('more DB orders than Redis buyers is a fault even mid-sale (Redis lost buyers)', () => {
    const n = numbers({ redis: { buyers: 30, remaining: 70, pending: 2 }, db: { orders: 40, remaining: 60 } });
    expect(checkInvariants(n).status).toBe('inconsistent');
    expect(rules(n)).toContain('buyers-orders');
  });

  it('Redis stock + buyers ≠ initial → inconsistent', () => {
    const n = numbers({ redis: { remaining: 61 } });
    expect(checkInvariants(n).status).toBe('inconsistent');
    expect(rules(n)).toEqual(['redis-stock']);
  });

  it('DB stock + orders ≠ initial → inconsistent, even while draining', () => {
    const n = numbers({ redis: { pending: 3 }, db: { remaining: 59, orders: 37 } });
    expect(checkInvariants(n).status).toBe('inconsistent');
    expect(rules(n)).toEqual(['db-stock']);
  });

  it('Redis and DB disagree on the initial stock → inconsistent', () => {
    const n = numbers({ redis: { initial: 110, remaining: 70 } });
    expect(rules(n)).toEqual(['initial']);
  });

  it('oversold is named', () => {
    const n = numbers({ redis: { initial: 100, remaining: 0, buyers: 101 }, db: { initial: 100, remaining: 0, orders: 101 } });
    const c = checkInvariants(n);
    expect(c.status).toBe('inconsistent');
    expect(c.differences.some((d) => d.rule === 'oversold')).toBe(true);
  });

  it('not preheated → inconsistent with a hint to preheat', () => {
    const c = checkInvariants(numbers({ redis: null }));
    expect(c.status).toBe('inconsistent');
    expect(c.differences.map((d) => d.rule)).toEqual(['not-preheated']);
  });

  it('a window edit that did not reach Redis → inconsistent', () => {
    const same = { db: [1000, 2000] as [number, number], redis: [1000, 2000] as [number, number] };
    expect(checkInvariants({ ...numbers(), window: same }).status).toBe('consistent');
    const c = checkInvariants({ ...numbers(), window: { ...same, redis: [1000, 3000] } });
    expect(c.differences.map((d) => d.rule)).toEqual(['window']);
  });

  it('waiting dead letters → inconsistent', () => {
    const c = checkInvariants(numbers({ db: { orders: 39, remaining: 61 }, deadLetters: 1 }));
    expect(c.status).toBe('inconsistent');
    expect(c.differences.map((d) => d.rule)).toContain('dead-letters');
  });
});
