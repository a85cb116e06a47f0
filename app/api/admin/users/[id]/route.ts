import { route } from '@/lib/http/route';
import { parseId, parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { changeUserRole, roleChangeInput } from '@/lib/admin/user-role';
import { consume } from '@/lib/rate-limit';

/** PATCH /api/admin/users/{id} `{ role }` — admin only; the user's live sessions are revoked. */
export const PATCH = route({ auth: 'admin' }, async ({ req, params, user }) => {
  await consume('consoleWriteUser', user.id);
  const id = parseId(params.id, '用户 id');
  return changeUserRole(db, redis, user, id, await parseJson(req, roleChangeInput));
});
