/**
 * Set-up data for the browser journeys, written straight to MySQL + Redis (the steps under test
 * go through the UI): fresh flash-sale vouchers on a seeded shop, preheated and with the shop's
 * cached voucher list dropped exactly as the admin's create does, and a second consumer with a
 * session token for grabbing over the API. Uses its own clients on the test env.
 */
import { randomInt } from 'node:crypto';
import { test } from '@playwright/test';
import type { DB } from '../../lib/db/client';
import { closeDb, createDb } from '../../lib/db/client';
import { VoucherStatus } from '../../lib/db/schema';
import { closeRedis, createRedis, type RedisClient } from '../../lib/redis/client';
import { checkInvariants, type InvariantReport } from '../../lib/seckill/invariants';
import { preheatVoucher } from '../../lib/seckill/preheat';
import { insertSeckillVoucher } from '../../lib/seckill/seckill.repository';
import { acceptWithoutPublishing, createTestUsers, waitFor, type TestUser } from './fixtures/seckill';
import { releaseOrder } from '../../lib/seckill/outbox';
import { publishOrder } from '../../lib/seckill/publish';
import { closeMq } from '../../lib/mq/connection';
import { invalidateShopVouchers } from '../../lib/shop/shop.cache';
import { findOrderView, type OrderView } from '../../lib/order/order.repository';
import { gateSale, type ReservationModeName } from '../../lib/seckill/reservation/reservation';
import { insertRoom } from '../../lib/seckill/room/room.repository';
import { lookRoom } from '../../lib/seckill/room/room';

export interface JourneyVoucher {
  id: string;
  title: string;
}

/**
 * A spec file's JourneyData on a seeded shop: made before the file's tests (with the shop's id),
 * disposed after them (its vouchers taken down, its clients closed).
 */
export function journeyData(shopName: string): { readonly data: JourneyData; readonly shopId: string } {
  const f = {} as { data: JourneyData; shopId: string };
  test.beforeAll(async () => {
    f.data = new JourneyData(shopName);
    f.shopId = await f.data.shopId();
  });
  test.afterAll(async () => {
    await f.data?.dispose();
  });
  return f;
}

export class JourneyData {
  private readonly db: DB = createDb(undefined, 2);
  private readonly redis: RedisClient = createRedis();
  private readonly created: JourneyVoucher[] = [];

  constructor(readonly shopName: string) {}

  async shopId(): Promise<string> {
    const row = await this.db.selectFrom('tb_shop').select('id').where('name', '=', this.shopName).executeTakeFirst();
    if (!row) throw new Error(`seeded shop ${this.shopName} is missing: did the global setup seed the database?`);
    return String(row.id);
  }

  /**
   * A seckill voucher on the shop with a unique title, live from `startsInMs` (default: a minute
   * ago); optionally reservation-only (reservations open a minute ago) and/or behind the waiting
   * room with a proof-of-work cost, as the console's create would make it.
   */
  async voucher(opts: { stock: number; startsInMs?: number; label: string; reservation?: ReservationModeName; room?: { powCost: number } }): Promise<JourneyVoucher> {
    const shopId = await this.shopId();
    const now = Date.now();
    const title = `旅程${opts.label} ${now.toString(36)}${randomInt(0, 1296).toString(36)}`;
    const id = await insertSeckillVoucher(this.db, {
      shopId,
      title,
      payValue: 990,
      actualValue: 5000,
      stock: opts.stock,
      beginTime: new Date(now + (opts.startsInMs ?? -60_000)),
      endTime: new Date(now + 3_600_000),
    });
    const { reservation, room } = opts;
    if (reservation) await this.db.transaction().execute((trx) => gateSale(trx, id, reservation, new Date(now - 60_000)));
    if (room) await insertRoom(this.db, { voucherId: id, powCost: room.powCost });
    await preheatVoucher(this.db, this.redis, id);
    await invalidateShopVouchers(this.redis, shopId);
    const v = { id, title };
    this.created.push(v);
    return v;
  }

  /** `count` people take tickets in the sale's waiting room through the room's own code, as other browsers would (ids that are nobody's). */
  async roomTickets(voucherId: string, count: number, firstId: number): Promise<void> {
    for (let i = 0; i < count; i++) await lookRoom(this.db, this.redis, voucherId, String(firstId + i), true);
  }

  /** Another consumer with a live session (its token works as `Authorization: Bearer`). */
  async consumer(): Promise<TestUser> {
    const [u] = await createTestUsers(this.db, this.redis, 1);
    return u!;
  }

  /**
   * An order the buyer already holds for the voucher that Redis has forgotten, as a failover to a
   * lagging replica leaves it (the same steps as e2e/routes/order/folded.test.ts): the grab script accepted
   * it and its message went to the broker, then the buyer mark, the unit and the outbox entry
   * vanished from Redis. Resolves with the order id once the worker has written it to MySQL; the
   * buyer's next grab is accepted and the worker folds it into this order.
   */
  async forgottenOrder(voucherId: string, phone: string): Promise<string> {
    const userId = await this.userId(phone);
    const msg = await acceptWithoutPublishing(this.redis, voucherId, userId);
    if (!(await releaseOrder(this.redis, voucherId, msg.orderId, userId))) throw new Error(`Redis kept order ${msg.orderId}`);
    await publishOrder(msg);
    await waitFor(`order ${msg.orderId} written`, () => this.db.selectFrom('tb_voucher_order').select('id').where('id', '=', msg.orderId).executeTakeFirst(), 15_000);
    return msg.orderId;
  }

  async userId(phone: string): Promise<string> {
    const row = await this.db.selectFrom('tb_user').select('id').where('phone', '=', phone).executeTakeFirstOrThrow();
    return String(row.id);
  }

  /** The ids of the orders MySQL holds for this buyer and voucher. */
  async orderIds(voucherId: string, userId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('tb_voucher_order').select('id').where('voucher_id', '=', voucherId).where('user_id', '=', userId).execute();
    return rows.map((r) => String(r.id));
  }

  order(id: string): Promise<OrderView | undefined> {
    return findOrderView(this.db, id);
  }

  /** Flash-sale invariant numbers for the voucher once the worker has drained it. */
  invariants(voucherId: string): Promise<InvariantReport> {
    return checkInvariants(this.db, this.redis, voucherId, { drained: true });
  }

  /** Takes this run's vouchers off the shop page (orders stay) and closes the clients. */
  async dispose(): Promise<void> {
    try {
      if (this.created.length) {
        await this.db.updateTable('tb_voucher').set({ status: VoucherStatus.TAKEN_DOWN }).where('id', 'in', this.created.map((v) => v.id)).execute();
        await invalidateShopVouchers(this.redis, await this.shopId());
      }
    } finally {
      this.redis.disconnect();
      await this.db.destroy();
      // Importing lib/redis/client opens the process-wide connection as well (publishOrder: the broker's).
      await Promise.all([closeRedis(), closeDb(), closeMq()]);
    }
  }
}
