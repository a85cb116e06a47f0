/**
 * A discarded dead letter stays discarded. A copy of the order still in flight (a redelivery, a
 * sweeper republish) that fails after the admin's discard used to file a new `dead` row behind the
 * `discarded` one: the sweeper, which reads the latest row, then treated the order as undecided and
 * kept the unit the discard had given back; replaying that new row left an outbox entry that the
 * sweeper republished for good while the worker's tombstone dropped every copy. The interleaving
 * (discard between a copy's failed persist and its dead-letter insert) is about one round trip
 * wide, so it is played here in that order on the real tables. Raised by a review helper.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomInt } from 'node:crypto';
import { closeDb, db } from '@/lib/db/client';
import { closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { insertDeadLetterOnce } from '@/lib/order/order.repository';
import { setDeadLetterStatus } from '@/lib/admin/dead-letter.repository';
import { deadLetterStatuses } from '@/lib/seckill/outbox.repository';

afterAll(async () => {
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

const rowsOf = (orderId: string) => db.selectFrom('tb_order_dead_letter').select(['id', 'status']).where('order_id', '=', orderId).orderBy('id').execute();

describe('a dead letter after a discard', () => {
  it('a late failing copy files nothing, and the sweeper still reads the order as discarded', async () => {
    const orderId = String(randomInt(1, 2 ** 47));
    const letter = { orderId, voucherId: '1', userId: '2', payload: '{}', reason: 'stock guard', attempts: 5 };
    await insertDeadLetterOnce(db, letter);
    const [first] = await rowsOf(orderId);
    await setDeadLetterStatus(db, first!.id, 'discarded');
    // The late copy fails and files its dead letter.
    await insertDeadLetterOnce(db, letter);
    expect((await rowsOf(orderId)).map((r) => r.status)).toEqual(['discarded']);
    expect((await deadLetterStatuses(db, [orderId])).get(orderId)?.status).toBe('discarded');
  });

  it('after a replay, a new failure is filed again', async () => {
    const orderId = String(randomInt(1, 2 ** 47));
    const letter = { orderId, voucherId: '1', userId: '2', payload: '{}', reason: 'stock guard', attempts: 5 };
    await insertDeadLetterOnce(db, letter);
    await insertDeadLetterOnce(db, letter); // once per order while it is dead
    const [first] = await rowsOf(orderId);
    await setDeadLetterStatus(db, first!.id, 'replayed');
    await insertDeadLetterOnce(db, letter);
    expect((await rowsOf(orderId)).map((r) => r.status)).toEqual(['replayed', 'dead']);
    expect((await deadLetterStatuses(db, [orderId])).get(orderId)?.status).toBe('dead');
  });
});
