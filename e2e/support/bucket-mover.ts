/**
 * A stock mover that dies between the two halves of a move (docs/buckets.md#moving-stock): takes
 * units out of one bucket (journaled), says so on stdout, and waits to be SIGKILLed before it
 * delivers them. Run by e2e/routes/seckill/buckets.test.ts with the test's Redis env.
 *   tsx e2e/support/bucket-mover.ts <voucherId> <n> <from> <to> <units>
 */
import { redis } from '@/lib/redis/client';
import { moveLockName, MOVE_LEASE_MS, newMoveId, takeUnits } from '@/lib/seckill/buckets/move';
import { tryWithLock } from '@/lib/lock';

const [vid, n, from, to, want] = process.argv.slice(2);
void tryWithLock(moveLockName(vid!), { leaseMs: MOVE_LEASE_MS }, async () => {
  const taken = await takeUnits(redis, vid!, Number(n), Number(from), Number(to), newMoveId(), Number(want));
  process.stdout.write(`taken ${taken}\n`);
  await new Promise(() => {}); // killed here, holding the lock, the units in the journal only
});
