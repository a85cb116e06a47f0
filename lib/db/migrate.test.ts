/**
 * Branches land in any order: a database that already ran a later-numbered migration still takes
 * an earlier one that arrives after it (here 007 ran before 005 existed on that database).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '@/lib/db/client';
import { ensureDatabase, MIGRATIONS_DIR, migrateToLatest } from '@/lib/db/migrate';
import { env } from '@/lib/env';

describe('migrateToLatest', () => {
  const url = new URL(env.DATABASE_URL);
  url.pathname = `${url.pathname}_unordered_${process.pid}`;
  const scratch = createDb(url.toString(), 2);
  let dir = '';

  afterAll(async () => {
    await sql.raw(`DROP DATABASE IF EXISTS \`${url.pathname.slice(1)}\``).execute(scratch).catch(() => {});
    await scratch.destroy();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('applies a migration whose number is lower than one the database already ran', async () => {
    await ensureDatabase(url.toString());
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'unordered-'));
    const files = (await fs.readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
    const late = files.find((f) => f.startsWith('005_'))!;
    expect(late).toBeDefined();
    for (const f of files.filter((x) => x !== late)) await fs.copyFile(path.join(MIGRATIONS_DIR, f), path.join(dir, f));
    const first = await migrateToLatest(scratch, dir);
    expect(first).toContain('007_uploads');

    await fs.copyFile(path.join(MIGRATIONS_DIR, late), path.join(dir, late));
    expect(await migrateToLatest(scratch, dir)).toEqual([late.replace(/\.sql$/, '')]);
    const cols = await sql<{ Field: string }>`SHOW COLUMNS FROM tb_voucher_order LIKE 'pay_value'`.execute(scratch);
    expect(cols.rows).toHaveLength(1);
    expect(await migrateToLatest(scratch, dir)).toEqual([]);
  });
});
