/**
 * `npm run up` does not open a demo install to the network (proof suite): loopback by default,
 * and a public HOST is refused while demo passwords or the dev SMS provider remain — checked on
 * the function and on the real script scripts/up.sh runs.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/lib/db/client';
import { hashPassword } from '@/lib/auth/password';
import { demoAccountsWithDemoPassword, isLoopbackHost, listenRefusal } from '@/lib/http/listen-guard';
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
});
