/**
 * Test fixtures for the shop domain (imported by tests only): a shop type, shops and merchants of
 * their own with unique names, a query-counting DB, and cleanup of exactly what was created.
 */
import { randomUUID } from 'node:crypto';
import { Kysely, MysqlDialect } from 'kysely';
import type { RedisClient } from '@/lib/redis/types';
import { createMysqlPool, type DB } from '@/lib/db/client';
import type { Database, Role } from '@/lib/db/schema';
import { env } from '@/lib/env';
import { keys } from '@/lib/redis/keys';
import { createSession } from '@/lib/auth/session';
import { cacheFor } from '@/lib/cache';
import { afterShopWrite } from '@/lib/shop/shop.cache';
import { randomPhone } from '@/lib/test/helpers';
import { deleteKeys } from '@/lib/redis/keyspace';

/** A real DB whose executed statements are recorded (to prove that bad input never queries). */
export function countingDb(): { db: DB; queries: string[] } {
  const queries: string[] = [];
  const db = new Kysely<Database>({
    dialect: new MysqlDialect({ pool: createMysqlPool(env.DATABASE_URL, 5) }),
    log: (e) => {
      if (e.level === 'query') queries.push(e.query.sql);
    },
  });
  return { db, queries };
}

export class ShopFixtures {
  readonly tag = randomUUID().slice(0, 8);
  readonly typeIds: string[] = [];
  readonly shopIds: string[] = [];
  readonly userIds: string[] = [];
  readonly voucherIds: string[] = [];

  constructor(
    private readonly db: DB,
    private readonly redis: RedisClient,
  ) {}

  async type(name = '测试分类'): Promise<string> {
    const res = await this.db.insertInto('tb_shop_type').values({ name: `${name}-${this.tag}-${this.typeIds.length}`, icon: '/types/food.svg', sort: 99 }).executeTakeFirstOrThrow();
    const id = String(res.insertId);
    this.typeIds.push(id);
    await cacheFor(this.redis).invalidate(keys.shopTypeList()); // as an operator adding a type must
    return id;
  }

  async shop(typeId: string, over: { x?: number; y?: number; sold?: number; ownerId?: string | null } = {}): Promise<string> {
    const n = this.shopIds.length;
    const res = await this.db
      .insertInto('tb_shop')
      .values({
        name: `测试店${n}-${this.tag}`,
        type_id: typeId,
        images: '/shops/1.svg,/shops/2.svg',
        area: '测试区',
        address: `测试路${n}号`,
        x: over.x ?? 120.15 + n * 0.001,
        y: over.y ?? 30.25,
        avg_price: 5000,
        sold: over.sold ?? 100 - n,
        score: 45,
        open_hours: '10:00-22:00',
        owner_id: over.ownerId ?? null,
      })
      .executeTakeFirstOrThrow();
    const id = String(res.insertId);
    this.shopIds.push(id);
    // A new shop goes through the same post-write path as an edit (lists, counts, GEO).
    await afterShopWrite(this.db, this.redis, null, (await this.db.selectFrom('tb_shop').selectAll().where('id', '=', id).executeTakeFirstOrThrow()));
    return id;
  }

  async voucher(shopId: string, seckill?: { stock: number; begin: Date; end: Date }): Promise<string> {
    const res = await this.db
      .insertInto('tb_voucher')
      .values({ shop_id: shopId, title: seckill ? '秒杀券' : '代金券', pay_value: 4500, actual_value: 5000, type: seckill ? 1 : 0 })
      .executeTakeFirstOrThrow();
    const id = String(res.insertId);
    this.voucherIds.push(id);
    if (seckill) {
      await this.db
        .insertInto('tb_seckill_voucher')
        .values({ voucher_id: id, initial_stock: seckill.stock, stock: seckill.stock, begin_time: seckill.begin, end_time: seckill.end })
        .execute();
    }
    return id;
  }

  /** A logged-in user of the given role (session created directly; login itself is tested elsewhere). */
  async user(role: Role): Promise<{ id: string; token: string }> {
    const res = await this.db.insertInto('tb_user').values({ phone: randomPhone(), nick_name: `${role}-${this.tag}`, role }).executeTakeFirstOrThrow();
    const id = String(res.insertId);
    this.userIds.push(id);
    const token = await createSession(this.redis, { id, nickName: `${role}-${this.tag}`, icon: '', role });
    return { id, token };
  }

  async cleanup(): Promise<void> {
    const { db, redis } = this;
    if (this.voucherIds.length) {
      await db.deleteFrom('tb_seckill_voucher').where('voucher_id', 'in', this.voucherIds).execute();
      await db.deleteFrom('tb_voucher').where('id', 'in', this.voucherIds).execute();
    }
    if (this.shopIds.length) {
      await db.deleteFrom('tb_audit_log').where('target_type', '=', 'shop').where('target_id', 'in', this.shopIds).execute();
      await db.deleteFrom('tb_shop').where('id', 'in', this.shopIds).execute();
    }
    if (this.typeIds.length) await db.deleteFrom('tb_shop_type').where('id', 'in', this.typeIds).execute();
    if (this.userIds.length) await db.deleteFrom('tb_user').where('id', 'in', this.userIds).execute();
    const cacheKeys = [
      ...this.shopIds.flatMap((id) => [keys.shop(id), keys.shopVouchers(id)]),
      ...this.typeIds.flatMap((t) => [keys.shopIdsByType(t), keys.shopGeo(t), keys.shopGeoReady(t)]),
      ...this.voucherIds.flatMap((v) => [keys.seckillMeta(v), keys.seckillStock(v)]),
      keys.shopTypeList(), // it counted our type's shops
    ];
    await deleteKeys(redis, [...cacheKeys, ...cacheKeys.map((k) => keys.fenceRecord(k))]);
  }
}
