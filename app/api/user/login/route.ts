import { route } from '@/lib/http/route';
import { parseJson } from '@/lib/http/parse';
import { db } from '@/lib/db/client';
import { redis } from '@/lib/redis/client';
import { login, loginInput } from '@/lib/auth/login';
import { loginDeviceCookie, presentedLoginDevice } from '@/lib/auth/login-device';

/**
 * API login: the token in the answer works as `Authorization: Bearer <token>`. It also answers
 * `deviceToken` (and sets it as an httpOnly cookie): sent back in the `X-Login-Device` header or
 * the cookie, it keeps this client out of the phone's global ceilings of wrong passwords and of
 * code requests.
 */
export const POST = route({ auth: 'none' }, async ({ req, ip }) => {
  const input = await parseJson(req, loginInput);
  const result = await login(db, redis, input, ip, presentedLoginDevice(req.headers));
  if (!result.deviceToken) return result;
  return Response.json({ data: result }, { headers: { 'set-cookie': loginDeviceCookie(result.deviceToken) } });
});
