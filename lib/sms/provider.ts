/**
 * SMS sending goes through this interface. The only provider so far is `dev`: it logs the code
 * and keeps the last one in `dev:sms:{phone}` for tests and the local demo. It refuses to exist
 * in production unless ALLOW_DEV_SMS_IN_PRODUCTION=true, so no real deployment leaks codes.
 */
import type { RedisClient } from '@/lib/redis/types';
import { env, isProduction } from '@/lib/env';
import { AppError } from '@/lib/errors';
import { log } from '@/lib/log';
import { keys } from '@/lib/redis/keys';

export interface SmsProvider {
  readonly name: string;
  sendLoginCode(phone: string, code: string, ttlSeconds: number): Promise<void>;
}

export class DevSmsProvider implements SmsProvider {
  readonly name = 'dev';
  constructor(private readonly redis: RedisClient) {
    if (isProduction && !env.ALLOW_DEV_SMS_IN_PRODUCTION) {
      log.error('the dev SMS provider refuses NODE_ENV=production; configure a real provider or set ALLOW_DEV_SMS_IN_PRODUCTION=true for a demo');
      throw new AppError('SERVICE_UNAVAILABLE', '短信服务未配置，暂时无法发送验证码');
    }
  }

  async sendLoginCode(phone: string, code: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(keys.devSms(phone), code, 'EX', ttlSeconds);
    log.info({ phone: `${phone.slice(0, 3)}****${phone.slice(7)}`, devCode: code }, 'dev sms: login code');
  }
}

let provider: SmsProvider | undefined;

export function smsProvider(redis: RedisClient): SmsProvider {
  provider ??= new DevSmsProvider(redis);
  return provider;
}
