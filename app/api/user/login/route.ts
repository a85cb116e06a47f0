import { route } from '@/lib/http/route';
import { parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { login, loginInput } from '@/lib/auth/login';

/** API login: the token in the answer works as `Authorization: Bearer <token>`. */
export const POST = route({ auth: 'none' }, async ({ req, ip }) => {
  const input = await parseJson(req, loginInput);
  return login(db, redis, input, ip);
});
