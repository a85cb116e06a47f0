/**
 * Migrations: Kysely's Migrator (ordering, locking, bookkeeping) over the plain .sql files in
 * prisma-free-sql/migrations. A file may hold several statements; they run in order.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Migrator, sql, type Migration, type MigrationProvider, type Kysely } from 'kysely';
import { createConnection } from 'mysql2/promise';
import { env } from '@/lib/env';

export const MIGRATIONS_DIR = path.join(process.cwd(), 'prisma-free-sql', 'migrations');

/** Splits on `;` at line ends, ignoring `--` comment lines. Our migrations hold no procedures. */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => !l.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly dir = MIGRATIONS_DIR) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await fs.readdir(this.dir)).filter((f) => f.endsWith('.sql')).sort();
    const out: Record<string, Migration> = {};
    for (const file of files) {
      const text = await fs.readFile(path.join(this.dir, file), 'utf8');
      out[file.replace(/\.sql$/, '')] = {
        up: async (db: Kysely<unknown>) => {
          for (const stmt of splitStatements(text)) await sql.raw(stmt).execute(db);
        },
      };
    }
    return out;
  }
}

/** Creates the database named in the URL if it is missing (needs a server-level connection). */
export async function ensureDatabase(url = env.DATABASE_URL): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Unsafe database name in DATABASE_URL: ${name}`);
  u.pathname = '/';
  const conn = await createConnection({ uri: u.toString(), connectTimeout: 5000 });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await conn.end();
  }
}

/**
 * Numbers are taken when work starts and branches land in any order, so a database may already
 * hold 007 when 005 arrives: each migration touches its own tables and columns, and an unapplied
 * one is applied whatever its place (Kysely refuses by default, which stops the app and the tests).
 */
export async function migrateToLatest<T>(db: Kysely<T>, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new SqlFileMigrationProvider(dir), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  const failed = (results ?? []).find((r) => r.status === 'Error');
  if (error || failed) {
    const why = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${why}`);
  }
  return applied;
}
