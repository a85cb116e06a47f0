/** Once per `vitest run`: create and migrate the test database. Refuses a non-test database. */
import './setup-env';

export default async function setup(): Promise<void> {
  const dbName = new URL(process.env.DATABASE_URL!).pathname.slice(1);
  if (!/test/.test(dbName)) throw new Error(`Refusing to run tests against database "${dbName}" (name must contain "test")`);
  const { ensureDatabase, migrateToLatest } = await import('@/lib/db/migrate');
  const { createDb } = await import('@/lib/db/client');
  await ensureDatabase();
  const db = createDb(process.env.DATABASE_URL, 2);
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
