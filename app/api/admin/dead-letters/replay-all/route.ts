import { route } from '@/lib/http/route';
import { expectNoBody } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { replayAllDeadLetters } from '@/lib/admin/dead-letters';
import { consume } from '@/lib/rate-limit';

/** Replays every waiting dead letter the caller may see (at most 1000 per call). */
export const POST = route({ auth: 'merchant' }, async ({ req, user }) => {
  await consume('consoleWriteUser', user.id);
  await expectNoBody(req);
  return replayAllDeadLetters(db, user);
});
