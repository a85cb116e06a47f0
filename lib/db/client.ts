import { Kysely, MysqlDialect, type Transaction } from 'kysely';
import { createPool, type Pool } from 'mysql2';
import { env } from '@/lib/env';
import type { Database } from '@/lib/db/schema';

export type DB = Kysely<Database>;
/** What services take: the caller decides whether it is a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

export function createMysqlPool(url = env.DATABASE_URL, connectionLimit = env.DB_POOL_SIZE): Pool {
  const pool = createPool({
    uri: url,
    connectionLimit,
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
    dateStrings: false,
    connectTimeout: 5000,
    enableKeepAlive: true,
  });
  // DATETIME defaults (CURRENT_TIMESTAMP) must be UTC like the values we write.
  pool.on('connection', (conn) => conn.query("SET time_zone = '+00:00'"));
  return pool;
}

export function createDb(url = env.DATABASE_URL, connectionLimit = env.DB_POOL_SIZE): DB {
  return new Kysely<Database>({ dialect: new MysqlDialect({ pool: createMysqlPool(url, connectionLimit) }) });
}

// One pool per process; cached on globalThis so Next's dev reloads don't leak pools.
const g = globalThis as unknown as { __hmdpDb?: DB };
export const db: DB = g.__hmdpDb ?? (g.__hmdpDb = createDb());

export async function closeDb(): Promise<void> {
  if (g.__hmdpDb) {
    const d = g.__hmdpDb;
    g.__hmdpDb = undefined;
    await d.destroy();
  }
}
