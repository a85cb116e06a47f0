/**
 * Before a server listens: a demo install (the seeded passwords, the dev SMS provider that needs no
 * phone, the dev payment provider that "pays" with no money) must not face a network. Listening on
 * loopback is always allowed; any other HOST prints a warning, and is refused while a demo account
 * still has its demo password or a dev provider is switched on in production. Called by scripts/up.sh (scripts/listen-guard.ts) and
 * callable by any server of the project before it binds.
 */
import { isIP } from 'node:net';
import type { Executor } from '@/lib/db/client';
import { env } from '@/lib/env';
import { verifyPassword } from '@/lib/auth/password';
import { findUserByPhone } from '@/lib/auth/user.repository';
import { demoAccounts } from '@/lib/seed/demo-data';

export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/** Demo accounts that still open with their published password. */
export async function demoAccountsWithDemoPassword(db: Executor): Promise<string[]> {
  const open: string[] = [];
  for (const a of demoAccounts) {
    const u = await findUserByPhone(db, a.phone);
    if (u?.password && (await verifyPassword(a.password, u.password))) open.push(a.phone);
  }
  return open;
}

export interface ListenCheck {
  host: string;
  devSmsInProduction: boolean;
  /** The dev payment provider would pay (ALLOW_DEV_PAYMENT_IN_PRODUCTION=true): anyone's order paid for nothing. */
  devPaymentInProduction?: boolean;
  demoPhones: string[];
}

/** The dev payment provider is the provider and switched on for production, like the dev SMS one. */
export const devPaymentOn = (e: { PAYMENT_PROVIDER: string; ALLOW_DEV_PAYMENT_IN_PRODUCTION: boolean } = env) => e.PAYMENT_PROVIDER === 'dev' && e.ALLOW_DEV_PAYMENT_IN_PRODUCTION;

/** Null when it may listen; else the reason it must not. Warnings go through `warn`. */
export function listenRefusal(c: ListenCheck, warn: (msg: string) => void = console.warn): string | null {
  if (isLoopbackHost(c.host)) return null;
  warn(`! HOST=${c.host}: listening beyond this machine. Put it behind HTTPS and set TRUSTED_PROXIES for your proxy.`);
  const doors: string[] = [];
  if (c.demoPhones.length) doors.push(`demo accounts still use the published demo passwords (${c.demoPhones.join(', ')})`);
  if (c.devSmsInProduction) doors.push('the dev SMS provider is on (ALLOW_DEV_SMS_IN_PRODUCTION=true): codes go to the log, not to phones');
  if (c.devPaymentInProduction) doors.push('the dev payment provider is on (ALLOW_DEV_PAYMENT_IN_PRODUCTION=true): orders are paid with no money');
  if (doors.length === 0) return null;
  return `refusing to listen on ${c.host}: ${doors.join('; ')}. Change those passwords and set ALLOW_DEV_SMS_IN_PRODUCTION=false and ALLOW_DEV_PAYMENT_IN_PRODUCTION=false, or listen on 127.0.0.1 (the default).`;
}

/**
 * The guard as every server of the project applies it before it binds: null, or why it must not.
 * The dev payment provider is read from the environment unless the caller says.
 */
export async function unsafeListenReason(db: Executor, host: string, devSmsInProduction: boolean, devPaymentInProduction = devPaymentOn()): Promise<string | null> {
  if (isLoopbackHost(host)) return null;
  return listenRefusal({ host, devSmsInProduction, devPaymentInProduction, demoPhones: await demoAccountsWithDemoPassword(db) });
}
