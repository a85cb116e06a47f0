/**
 * For tests of the migrations themselves: a throwaway database beside the test one and a folder
 * holding the migrations a test chooses, so it can run some, write rows, then add the rest.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDb, type DB } from '@/lib/db/client';
import { ensureDatabase, MIGRATIONS_DIR, migrateToLatest } from '@/lib/db/migrate';
import { env } from '@/lib/env';

export interface ScratchMigrations {
  db: DB;
  /** Every migration file name, in order. */
  files: string[];
  /** Puts these migration files into the scratch folder and migrates the scratch database to them; the names applied. */
  apply(files: string[]): Promise<string[]>;
  drop(): Promise<void>;
}

export async function scratchMigrations(tag: string): Promise<ScratchMigrations> {
  const url = new URL(env.DATABASE_URL);
  url.pathname = `${url.pathname}_${tag}_${process.pid}`;
  await ensureDatabase(url.toString());
  const db = createDb(url.toString(), 2);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `${tag}-`));
  const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  return {
    db,
    files,
    async apply(chosen) {
      for (const f of chosen) await fs.copyFile(path.join(MIGRATIONS_DIR, f), path.join(dir, f));
      return migrateToLatest(db, dir);
    },
    async drop() {
      await sql.raw(`DROP DATABASE IF EXISTS \`${url.pathname.slice(1)}\``).execute(db).catch(() => {});
      await db.destroy();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
