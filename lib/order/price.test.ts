/**
 * An order keeps the price it was placed at. The flash-sale worker's batched insert takes it from
 * the batch's one voucher read; a later reprice of the voucher changes nothing the order is charged.
 * Migration 005 backfills existing orders from their voucher (run here on a scratch database that
 * holds orders written before it).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { nextOrderId } from '@/lib/id';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers } from '@/e2e/support/fixtures/seckill';
import { createSaleInShop } from '@/e2e/support/fixtures/order-lifecycle';
import { orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { scratchMigrations, type ScratchMigrations } from '@/e2e/support/scratch-migrations';
import { findLifecycleOrder } from '@/lib/order/lifecycle.repository';
import { persistOrders } from '@/lib/order/persist';
import { setVoucherPrice } from '@/e2e/support/fixtures/payment.repository';

let f: ConsoleFixture;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});

afterAll(async () => {
  await Promise.all([closeDb(), closeRedis()]);
});

describe('the flash-sale batch writes each order with its price', () => {
  it('persisted at 9.90; the voucher repriced to 19.90; the order still costs 9.90', async () => {
    const voucherId = await createSaleInShop(db, redis, f.shopA, 5);
    const users = await createTestUsers(db, redis, 3);
    const msgs = await Promise.all(users.map(async (u) => ({ v: 1 as const, orderId: await nextOrderId(redis), userId: u.userId, voucherId, at: Date.now() })));
    expect((await persistOrders(db, msgs)).inserted).toBe(3);
    await setVoucherPrice(db, voucherId, 1990);
    for (const m of msgs) {
      expect(Number((await orderRow(db, m.orderId)).pay_value)).toBe(990);
      expect((await findLifecycleOrder(db, m.orderId))?.payValue).toBe(990);
    }
  });
});

describe('migration 005', () => {
  let scratch: ScratchMigrations | undefined;
  afterAll(() => scratch?.drop());

  it('backfills the price of orders written before it from their voucher', async () => {
    scratch = await scratchMigrations('m005');
    const { files, db: scratchDb } = scratch;
    await scratch.apply(files.filter((x) => x < '005'));
    await sql`INSERT INTO tb_shop_type (id, name) VALUES (1, 't')`.execute(scratchDb);
    await sql`INSERT INTO tb_shop (id, name, type_id, address, x, y, avg_price) VALUES (1, 's', 1, 'a', 0, 0, 0)`.execute(scratchDb);
    await sql`INSERT INTO tb_voucher (id, shop_id, title, pay_value, actual_value, type) VALUES (7, 1, 'v', 2700, 5000, 0)`.execute(scratchDb);
    await sql`INSERT INTO tb_voucher_order (id, user_id, voucher_id, kind) VALUES (100, 1, 7, 0), (101, 2, 99, 0)`.execute(scratchDb);

    await scratch.apply(files.filter((y) => y >= '005'));
    const rows = await sql<{ id: string; pay_value: string }>`SELECT id, pay_value FROM tb_voucher_order ORDER BY id`.execute(scratchDb);
    // Its voucher's price; an order whose voucher is gone keeps 0, what it was charged before.
    expect(rows.rows.map((r) => [String(r.id), Number(r.pay_value)])).toEqual([
      ['100', 2700],
      ['101', 0],
    ]);
    const col = await sql<{ IS_NULLABLE: string }>`SELECT IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tb_voucher_order' AND COLUMN_NAME = 'pay_value'`.execute(scratchDb);
    expect(col.rows[0]?.IS_NULLABLE).toBe('NO');
  });
});
