/**
 * `npm run up` does not open a demo install to the network (proof suite): loopback by default,
 * and a public HOST is refused while demo passwords, the dev SMS provider or the dev payment
 * provider remain — checked on the function and on the real script scripts/up.sh runs.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { hashPassword } from '@/lib/auth/password';
import { demoAccountsWithDemoPassword, devPaymentOn, isLoopbackHost, listenRefusal } from '@/lib/seed/listen-guard';
import { demoAccounts } from '@/lib/seed/demo-data';

afterAll(async () => {
  await closeDb();
});

const runGuard = (extra: Record<string, string>) =>
  spawnSync('npx', ['tsx', 'scripts/listen-guard.ts'], { env: { ...process.env, LOG_LEVEL: 'silent', ...extra }, encoding: 'utf8' });

describe('listen guard', () => {
  it('knows loopback from the rest', () => {
    for (const h of ['127.0.0.1', '127.0.0.53', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses a public host while a door is open, warns when it is closed', () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    expect(listenRefusal({ host: '127.0.0.1', devSmsInProduction: true, demoPhones: ['13800000000'] }, warn)).toBeNull();
    expect(warnings).toEqual([]);
    expect(listenRefusal({ host: '0.0.0.0', devSmsInProduction: false, demoPhones: ['13800000000'] }, warn)).toMatch(/13800000000/);
    expect(listenRefusal({ host: '0.0.0.0', devSmsInProduction: true, demoPhones: [] }, warn)).toMatch(/ALLOW_DEV_SMS_IN_PRODUCTION/);
    expect(listenRefusal({ host: '0.0.0.0', devSmsInProduction: false, demoPhones: [] }, warn)).toBeNull();
    expect(warnings.length).toBe(3);
  });

  it('finds demo accounts that still have the demo password', async () => {
    const a = demoAccounts[1]!;
    const existing = await db.selectFrom('tb_user').select('id').where('phone', '=', a.phone).executeTakeFirst();
    if (!existing) await db.insertInto('tb_user').values({ phone: a.phone, nick_name: a.nick_name, role: a.role, password: await hashPassword(a.password) }).execute();
    else await db.updateTable('tb_user').set({ password: await hashPassword(a.password) }).where('phone', '=', a.phone).execute();
    expect(await demoAccountsWithDemoPassword(db)).toContain(a.phone);
  });

  it('the script scripts/up.sh runs: exit 1 on 0.0.0.0 with the demo password in place, 0 on loopback', () => {
    const open = runGuard({ HOST: '0.0.0.0', ALLOW_DEV_SMS_IN_PRODUCTION: 'false' });
    expect(open.status, open.stderr).toBe(1);
    expect(open.stderr).toMatch(/refusing to listen on 0\.0\.0\.0/);
    expect(runGuard({ HOST: '127.0.0.1', ALLOW_DEV_SMS_IN_PRODUCTION: 'true' }).status).toBe(0);
  });

  it('counts the dev payment provider like the dev SMS one: a public HOST is refused while it would pay', () => {
    const warn = () => {};
    expect(devPaymentOn({ PAYMENT_PROVIDER: 'dev', ALLOW_DEV_PAYMENT_IN_PRODUCTION: true })).toBe(true);
    expect(devPaymentOn({ PAYMENT_PROVIDER: 'dev', ALLOW_DEV_PAYMENT_IN_PRODUCTION: false })).toBe(false);
    expect(listenRefusal({ host: '0.0.0.0', devSmsInProduction: false, devPaymentInProduction: true, demoPhones: [] }, warn)).toMatch(/dev payment provider.*ALLOW_DEV_PAYMENT_IN_PRODUCTION/);
    expect(listenRefusal({ host: '127.0.0.1', devSmsInProduction: false, devPaymentInProduction: true, demoPhones: [] }, warn)).toBeNull();
    expect(listenRefusal({ host: '0.0.0.0', devSmsInProduction: false, devPaymentInProduction: false, demoPhones: [] }, warn)).toBeNull();
  });

  it('the script refuses 0.0.0.0 for the dev payment provider alone (no demo password, no dev SMS), and allows it once switched off', async () => {
    // No demo password left, for this test only: the dev payment provider is the one door.
    const saved = await db.selectFrom('tb_user').select(['id', 'password']).where('phone', 'in', demoAccounts.map((a) => a.phone)).execute();
    try {
      for (const u of saved) await db.updateTable('tb_user').set({ password: await hashPassword(`changed-${u.id}-0123456789`) }).where('id', '=', u.id).execute();
      expect(await demoAccountsWithDemoPassword(db)).toEqual([]);
      const open = runGuard({ HOST: '0.0.0.0', ALLOW_DEV_SMS_IN_PRODUCTION: 'false', ALLOW_DEV_PAYMENT_IN_PRODUCTION: 'true' });
      expect(open.status, open.stderr).toBe(1);
      expect(open.stderr).toMatch(/dev payment provider/);
      const closed = runGuard({ HOST: '0.0.0.0', ALLOW_DEV_SMS_IN_PRODUCTION: 'false', ALLOW_DEV_PAYMENT_IN_PRODUCTION: 'false' });
      expect(closed.status, closed.stderr).toBe(0);
    } finally {
      for (const u of saved) await db.updateTable('tb_user').set({ password: u.password }).where('id', '=', u.id).execute();
    }
  });
});
