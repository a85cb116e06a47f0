import { afterAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { listAudit, recordAudit } from '@/lib/audit/audit';

afterAll(async () => {
  await closeDb();
  await closeRedis();
});

const uniqueTarget = () => `audit-test-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

describe('recordAudit', () => {
  it('stores who, what, before → after inside the caller transaction', async () => {
    const targetId = uniqueTarget();
    await db.transaction().execute((trx) =>
      recordAudit(trx, { actorId: '1', action: 'test.update', targetType: 'test', targetId, before: { stock: 1n }, after: { stock: 2, at: new Date(0) } }),
    );
    const [row] = await listAudit(db, { targetType: 'test', targetId, limit: 5 });
    expect(row).toMatchObject({ actorId: '1', action: 'test.update', before: { stock: '1' }, after: { stock: 2, at: '1970-01-01T00:00:00.000Z' } });
  });

  it('rolls back with the action when the transaction fails', async () => {
    const targetId = uniqueTarget();
    await expect(
      db.transaction().execute(async (trx) => {
        await recordAudit(trx, { actorId: '1', action: 'test.update', targetType: 'test', targetId, before: null, after: {} });
        throw new Error('action failed');
      }),
    ).rejects.toThrow('action failed');
    expect(await listAudit(db, { targetType: 'test', targetId, limit: 5 })).toHaveLength(0);
  });
});
