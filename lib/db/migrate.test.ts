/**
 * Branches land in any order: a database that already ran a later-numbered migration still takes
 * an earlier one that arrives after it (here 007 ran before 005 existed on that database).
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchMigrations, type ScratchMigrations } from '@/e2e/support/scratch-migrations';

describe('migrateToLatest', () => {
  let scratch: ScratchMigrations | undefined;
  afterAll(() => scratch?.drop());

  it('applies a migration whose number is lower than one the database already ran', async () => {
    scratch = await scratchMigrations('unordered');
    const late = scratch.files.find((f) => f.startsWith('005_'))!;
    expect(late).toBeDefined();
    expect(await scratch.apply(scratch.files.filter((f) => f !== late))).toContain('007_uploads');

    expect(await scratch.apply([late])).toEqual([late.replace(/\.sql$/, '')]);
    const cols = await sql<{ Field: string }>`SHOW COLUMNS FROM tb_voucher_order LIKE 'pay_value'`.execute(scratch.db);
    expect(cols.rows).toHaveLength(1);
    expect(await scratch.apply([])).toEqual([]);
  });
});
