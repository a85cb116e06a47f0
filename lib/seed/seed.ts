/**
 * Idempotent demo seed: upserts by natural keys (type name, shop name, phone, shop+title), so
 * running it twice changes nothing and never duplicates a row.
 */
import type { DB } from '@/lib/db/client';
import { VoucherType } from '@/lib/db/schema';
import { hashPassword } from '@/lib/auth/password';
import { demoAccounts, demoShops, shopTypes } from '@/lib/seed/demo-data';

export interface SeedResult {
  types: number;
  shops: number;
  seckillVoucherIds: string[];
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;

export async function seedDemo(db: DB, now = new Date()): Promise<SeedResult> {
  return db.transaction().execute(async (trx) => {
    const userIds: string[] = [];
    for (const a of demoAccounts) {
      const existing = await trx.selectFrom('tb_user').select('id').where('phone', '=', a.phone).executeTakeFirst();
      if (existing) {
        userIds.push(existing.id);
        continue;
      }
      await trx.insertInto('tb_user').values({ phone: a.phone, nick_name: a.nick_name, role: a.role, password: await hashPassword(a.password) }).execute();
      const row = await trx.selectFrom('tb_user').select('id').where('phone', '=', a.phone).executeTakeFirstOrThrow();
      userIds.push(row.id);
    }

    await trx.insertInto('tb_shop_type').ignore().values(shopTypes).execute();
    const types = await trx.selectFrom('tb_shop_type').select(['id', 'name']).execute();
    const typeId = new Map(types.map((t) => [t.name, t.id]));

    const shops = demoShops();
    await trx
      .insertInto('tb_shop')
      .ignore()
      .values(
        shops.map((s) => ({
          name: s.name,
          type_id: typeId.get(s.typeName)!,
          images: s.images,
          area: s.area,
          address: s.address,
          x: s.x,
          y: s.y,
          avg_price: s.avgPrice,
          score: s.score,
          sold: s.sold,
          comments: s.comments,
          open_hours: s.openHours,
          owner_id: s.owner === null ? null : userIds[s.owner]!,
        })),
      )
      .execute();
    const shopRows = await trx.selectFrom('tb_shop').select(['id', 'name']).execute();
    const shopId = new Map(shopRows.map((s) => [s.name, s.id]));

    const first = shopId.get(shops[0]!.name)!;
    const second = shopId.get(shops[1]!.name)!;
    const ktv = shopId.get(shops.find((s) => s.typeName === 'KTV')!.name)!;
    const vouchers = [
      { shop: first, title: '50元代金券', sub: '周一至周日均可使用', pay: 4750, actual: 5000, seckill: null },
      { shop: first, title: '100元代金券(限时秒杀)', sub: '限时抢购，每人限一张', pay: 5900, actual: 10000, seckill: { stock: 100, begin: new Date(now.getTime() - HOUR), end: new Date(now.getTime() + 30 * DAY) } },
      { shop: first, title: '200元代金券(明日开抢)', sub: '即将开抢', pay: 9900, actual: 20000, seckill: { stock: 50, begin: new Date(now.getTime() + HOUR), end: new Date(now.getTime() + 7 * DAY) } },
      { shop: second, title: '双人套餐秒杀', sub: '已结束的活动', pay: 8800, actual: 19800, seckill: { stock: 20, begin: new Date(now.getTime() - 3 * DAY), end: new Date(now.getTime() - DAY) } },
      { shop: second, title: '30元代金券', sub: '全场通用', pay: 2700, actual: 3000, seckill: null },
      { shop: ktv, title: '欢唱3小时秒杀', sub: '周一至周五白天场', pay: 3900, actual: 16800, seckill: { stock: 30, begin: new Date(now.getTime() - HOUR), end: new Date(now.getTime() + 14 * DAY) } },
    ];

    const seckillVoucherIds: string[] = [];
    for (const v of vouchers) {
      let row = await trx.selectFrom('tb_voucher').select('id').where('shop_id', '=', v.shop).where('title', '=', v.title).executeTakeFirst();
      if (!row) {
        const res = await trx
          .insertInto('tb_voucher')
          .values({ shop_id: v.shop, title: v.title, sub_title: v.sub, rules: '每人限用一张\n不与其他优惠同享', pay_value: v.pay, actual_value: v.actual, type: v.seckill ? VoucherType.SECKILL : VoucherType.NORMAL })
          .executeTakeFirstOrThrow();
        row = { id: String(res.insertId) };
        if (v.seckill) {
          await trx
            .insertInto('tb_seckill_voucher')
            .values({ voucher_id: row.id, initial_stock: v.seckill.stock, stock: v.seckill.stock, begin_time: v.seckill.begin, end_time: v.seckill.end })
            .execute();
        }
      }
      if (v.seckill) seckillVoucherIds.push(row.id);
    }
    return { types: types.length, shops: shopRows.length, seckillVoucherIds };
  });
}
