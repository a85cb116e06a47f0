/**
 * Payment settings that must not start wrong: PAYMENT_NOTIFY_SECRET, when set, is at least 32 bytes
 * (a shorter one can be guessed offline from one captured notify), and the dev payment provider,
 * which moves no money, refuses to charge in production unless ALLOW_DEV_PAYMENT_IN_PRODUCTION=true.
 * Each case is a real child process that loads lib/env.ts with the given environment.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const run = (code: string, extra: Record<string, string>) =>
  spawnSync('npx', ['tsx', '-e', code], { env: { ...process.env, LOG_LEVEL: 'silent', ...extra }, encoding: 'utf8', timeout: 60_000 });

const LOAD_ENV = "import('./lib/env.ts').then(() => console.log('loaded'))";

describe('PAYMENT_NOTIFY_SECRET', () => {
  it('refuses a secret shorter than 32 bytes and names the variable; accepts 32 bytes, and empty (every notify refused)', () => {
    const r = run(LOAD_ENV, { PAYMENT_NOTIFY_SECRET: 'short-secret-0123456789' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/PAYMENT_NOTIFY_SECRET: must be at least 32 bytes/);
    // 31 bytes of text that are 11 characters: the bound is on bytes.
    expect(run(LOAD_ENV, { PAYMENT_NOTIFY_SECRET: '密钥密钥密钥密钥密钥' + 'x' }).status).not.toBe(0);
    expect(run(LOAD_ENV, { PAYMENT_NOTIFY_SECRET: 'x'.repeat(32) }).stdout).toMatch(/loaded/);
    expect(run(LOAD_ENV, { PAYMENT_NOTIFY_SECRET: '' }).stdout).toMatch(/loaded/);
  });
});

describe('the dev payment provider in production', () => {
  const CHARGE = "import('./lib/payment/provider.ts').then(async (m) => { try { const r = await m.devPaymentProvider.charge({ attemptId: '1', orderId: '1', amount: 1 }); console.log('charged', r.kind); } catch (e) { console.log('refused', e.name); } })";

  it('refuses to charge unless ALLOW_DEV_PAYMENT_IN_PRODUCTION=true', () => {
    expect(run(CHARGE, { NODE_ENV: 'production', ALLOW_DEV_PAYMENT_IN_PRODUCTION: 'false' }).stdout).toMatch(/refused PaymentDeclined/);
    expect(run(CHARGE, { NODE_ENV: 'production', ALLOW_DEV_PAYMENT_IN_PRODUCTION: 'true' }).stdout).toMatch(/charged paid/);
  });
});
