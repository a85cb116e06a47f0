/**
 * insertDeadLetterOnce under real concurrency: several workers (a pool each) file dead letters at
 * the same moment. Every filing lands, retried only as the worker's handler retries (a transient
 * error: lib/order/handler.ts untilDbAnswers), and each order or poison body has one row.
 *
 * With INSERT ... SELECT ... WHERE NOT EXISTS, two workers filing two different orders at once
 * deadlocked (the shared gap locks of the read, the table's AUTO-INC lock of a bulk insert), and
 * MariaDB reported it as ER_AUTOINC_READ_FAILED, which is not transient: the handler logged it and
 * acked, and that dead letter never reached MySQL (about 1 % of such filings, measured).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { createDb, db, closeDb } from '@/lib/db/client';
import { insertDeadLetterOnce } from '@/lib/order/order.repository';
import { isTransientDbError } from '@/lib/order/persist';
import { scratchMigrations, type ScratchMigrations } from '@/e2e/support/scratch-migrations';

const WORKERS = 4;
const ROUNDS = 150;
const workers = Array.from({ length: WORKERS }, () => createDb(undefined, 2));
/** Every row is this file's (its reason): removed after, or another file's replay-all would republish them all. */
const REASON = `dead-letter-once test ${randomInt(0, 1e9)}`;
afterAll(async () => {
  await db.deleteFrom('tb_order_dead_letter').where('reason', '=', REASON).execute();
  await Promise.all(workers.map((w) => w.destroy()));
  await closeDb();
});

type Db = (typeof workers)[number];

async function file(w: Db, orderId: string | null, payload: string): Promise<void> {
  for (;;) {
    try {
      return await insertDeadLetterOnce(w, { orderId, voucherId: '1', userId: '2', payload, reason: REASON, attempts: 5 });
    } catch (err) {
      if (!isTransientDbError(err)) throw err;
    }
  }
}

/** Each round: every worker files at once. The errors the handler would not have retried, by code. */
async function race(rounds: number, filing: (round: number, worker: number) => { orderId: string | null; payload: string }): Promise<string[]> {
  const lost: string[] = [];
  for (let r = 0; r < rounds; r++) {
    const settled = await Promise.allSettled(workers.map((w, k) => {
      const f = filing(r, k);
      return file(w, f.orderId, f.payload);
    }));
    for (const s of settled) if (s.status === 'rejected') lost.push(String((s.reason as { code?: string }).code ?? s.reason));
  }
  return lost;
}

const payloadOf = (orderId: string) => `{"v":1,"orderId":"${orderId}","userId":"2","voucherId":"1"}`;

describe('insertDeadLetterOnce, several workers at once', () => {
  it('files every order of several dead-lettered at the same moment', async () => {
    // New order ids are the largest in the table: the filings all land in the index's last gap.
    const base = BigInt(Date.now()) * 100_000n + BigInt(randomInt(0, 1000)) * 1000n;
    const ids: string[] = [];
    const lost = await race(ROUNDS, (r, k) => {
      const id = String(base + BigInt(r * WORKERS + k));
      ids.push(id);
      return { orderId: id, payload: payloadOf(id) };
    });
    expect(lost).toEqual([]);
    const { rows } = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM tb_order_dead_letter WHERE order_id IN (${sql.join(ids)})`.execute(db);
    expect(Number(rows[0]!.n)).toBe(ROUNDS * WORKERS);
  });

  it('files one row for one order filed by every worker at once', async () => {
    const base = BigInt(Date.now()) * 100_000n + BigInt(randomInt(0, 1000)) * 1000n + 500n;
    const ids = Array.from({ length: ROUNDS }, (_, r) => String(base + BigInt(r)));
    const lost = await race(ROUNDS, (r) => ({ orderId: ids[r]!, payload: payloadOf(ids[r]!) }));
    expect(lost).toEqual([]);
    const { rows } = await sql<{ order_id: string; n: number }>`
      SELECT order_id, COUNT(*) AS n FROM tb_order_dead_letter WHERE order_id IN (${sql.join(ids)}) GROUP BY order_id`.execute(db);
    expect(rows).toHaveLength(ROUNDS);
    expect(rows.filter((x) => Number(x.n) !== 1)).toEqual([]);
  });

  it('files one row per poison body, whichever workers file it at once', async () => {
    const tag = `poison-race-${randomInt(0, 1e9)}`;
    // Two bodies a round, each filed by two workers.
    const lost = await race(ROUNDS, (r, k) => ({ orderId: null, payload: `not json ${tag} ${r}-${k % 2}` }));
    expect(lost).toEqual([]);
    const { rows } = await sql<{ payload: string; n: number }>`
      SELECT payload, COUNT(*) AS n FROM tb_order_dead_letter WHERE order_id IS NULL AND payload LIKE ${`not json ${tag} %`} GROUP BY payload`.execute(db);
    expect(rows).toHaveLength(ROUNDS * 2);
    expect(rows.filter((x) => Number(x.n) !== 1)).toEqual([]);
  });
});

describe('migration 012', () => {
  let scratch: ScratchMigrations | undefined;
  afterAll(() => scratch?.drop());

  it('keeps the duplicates filed before it, outside the key, and files nothing more for their orders', async () => {
    scratch = await scratchMigrations('m012');
    const { files, db: scratchDb } = scratch;
    await scratch.apply(files.filter((x) => x < '012'));
    // Order 1 filed twice; order 2 discarded, then filed again (the bug dead-letter-after-discard
    // fixed); order 3 replayed, then failed again (allowed); one poison body filed twice.
    await sql`
      INSERT INTO tb_order_dead_letter (id, order_id, payload, reason, attempts, status) VALUES
        (1, 1, 'a', 'r', 5, 'dead'), (2, 1, 'a', 'r', 5, 'dead'),
        (3, 2, 'b', 'r', 5, 'discarded'), (4, 2, 'b', 'r', 5, 'dead'),
        (5, 3, 'c', 'r', 5, 'replayed'), (6, 3, 'c', 'r', 5, 'dead'),
        (7, NULL, 'poison', 'r', 1, 'dead'), (8, NULL, 'poison', 'r', 1, 'dead'), (9, NULL, 'Poison', 'r', 1, 'dead')`.execute(scratchDb);

    await scratch.apply(files);
    const rows = await scratchDb.selectFrom('tb_order_dead_letter').select(['id', 'superseded_by', 'once_key']).orderBy('id').execute();
    expect(rows.map((r) => [Number(r.id), r.superseded_by === null ? null : Number(r.superseded_by)])).toEqual([
      [1, 2], [2, null],
      [3, null], [4, 3], // the discard counts: the order is never filed again
      [5, null], [6, null],
      [7, 8], [8, null], [9, null], // bodies compared byte for byte, as before
    ]);
    expect(rows.find((r) => Number(r.id) === 5)!.once_key).toBeNull();

    for (const [orderId, payload] of [['1', 'a'], ['2', 'b'], ['3', 'c'], [null, 'poison'], [null, 'Poison']] as const) {
      await insertDeadLetterOnce(scratchDb, { orderId, voucherId: null, userId: null, payload, reason: 'again', attempts: 5 });
    }
    expect(await scratchDb.selectFrom('tb_order_dead_letter').select('id').where('reason', '=', 'again').execute()).toEqual([]);
  });
});
