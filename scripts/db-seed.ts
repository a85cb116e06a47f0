/** npm run db:seed — idempotent demo data (see lib/seed), then the seckill vouchers preheated into Redis. */
import { closeDb, db } from '@/lib/db/client';
import { closeRedis, redis } from '@/lib/redis/client';
import { seedDemo } from '@/lib/seed/seed';
import { preheatVoucher } from '@/lib/seckill/preheat';
import { seedSocial } from '@/lib/seed/social-seed';

try {
  const r = await seedDemo(db);
  console.log(`seeded: ${r.types} shop types, ${r.shops} shops, ${r.seckillVoucherIds.length} seckill vouchers`);
  // Safe to repeat: preheat unions buyers and recomputes the remaining stock from the database.
  for (const id of r.seckillVoucherIds) {
    const p = await preheatVoucher(db, redis, id);
    console.log(`preheated seckill voucher ${id}: ${p.remaining}/${p.initial} left, ${p.buyers} buyers`);
  }
  const social = await seedSocial(db, redis);
  console.log(`seeded 点评: ${social.users} users, ${social.notes} notes with generated pictures`);
} finally {
  await closeDb();
  await closeRedis();
}
