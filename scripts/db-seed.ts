/** npm run db:seed — idempotent demo data (see lib/seed). */
import { closeDb, db } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { seedDemo } from '@/lib/seed/seed';

try {
  const r = await seedDemo(db);
  console.log(`seeded: ${r.types} shop types, ${r.shops} shops, ${r.seckillVoucherIds.length} seckill vouchers`);
} finally {
  await closeDb();
  await closeRedis();
}
