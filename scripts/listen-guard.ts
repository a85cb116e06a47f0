/**
 * `tsx scripts/listen-guard.ts`: exits 1 (with the reason) when HOST is not loopback while the demo
 * passwords, the dev SMS provider or the dev payment provider are still in place (lib/seed/listen-guard.ts). scripts/up.sh
 * runs it before starting the web server.
 */
import { closeDb, db } from '@/lib/db/client';
import { env } from '@/lib/env';
import { devPaymentOn, unsafeListenReason } from '@/lib/seed/listen-guard';

async function main(): Promise<number> {
  const refusal = await unsafeListenReason(db, env.HOST, env.SMS_PROVIDER === 'dev' && env.ALLOW_DEV_SMS_IN_PRODUCTION, devPaymentOn(env));
  if (refusal) console.error(`✗ ${refusal}`);
  return refusal ? 1 : 0;
}

main()
  .then(async (code) => {
    await closeDb();
    process.exit(code);
  })
  .catch(async (e: unknown) => {
    console.error('✗ listen guard failed:', e instanceof Error ? e.message : e);
    await closeDb().catch(() => {});
    process.exit(1);
  });
