/** npm run db:migrate — creates the database if needed and applies every pending .sql migration. */
import { createDb } from '@/lib/db/client';
import { ensureDatabase, migrateToLatest } from '@/lib/db/migrate';
import { env } from '@/lib/env';

await ensureDatabase(env.DATABASE_URL);
const db = createDb(env.DATABASE_URL, 2);
try {
  const applied = await migrateToLatest(db);
  console.log(applied.length ? `migrated: ${applied.join(', ')}` : 'database schema is up to date');
} finally {
  await db.destroy();
}
