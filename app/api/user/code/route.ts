import { route } from '@/lib/http/route';
import { parseJson } from '@/lib/http/parse';
import { redis } from '@/lib/redis/client';
import { sendCodeInput, sendLoginCode, CODE_TTL_SECONDS } from '@/lib/auth/login';
import { presentedLoginDevice } from '@/lib/auth/login-device';

export const POST = route({ auth: 'none' }, async ({ req, ip }) => {
  const { phone } = await parseJson(req, sendCodeInput);
  await sendLoginCode(redis, phone, ip, presentedLoginDevice(req.headers));
  return { sent: true, expiresIn: CODE_TTL_SECONDS };
});
