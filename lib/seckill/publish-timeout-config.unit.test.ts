/**
 * PUBLISH_CONFIRM_TIMEOUT_MS must stay below OUTBOX_STALE_MS: a grab whose message never left the
 * process gives its unit back by removing the outbox entry once the confirm wait runs out, which is
 * safe only while the sweeper has not republished that entry as stale (lib/seckill/grab.ts). lib/env
 * refuses a configuration that breaks it, naming both variables.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { crossFieldProblems, envSchema } from '@/lib/env';

const base = { AUTH_SECRET: 'x'.repeat(32), REDIS_URL: 'redis://127.0.0.1:6379/3' };
const problems = (vars: Record<string, string>) => crossFieldProblems(envSchema.parse({ ...base, ...vars }));
const BOTH = /^PUBLISH_CONFIRM_TIMEOUT_MS \(\d+\) must be below OUTBOX_STALE_MS \(\d+\)/;

describe('PUBLISH_CONFIRM_TIMEOUT_MS against OUTBOX_STALE_MS', () => {
  test('the defaults (2 s, 10 s) and any timeout below the stale age pass', () => {
    expect(problems({})).toEqual([]);
    expect(problems({ PUBLISH_CONFIRM_TIMEOUT_MS: '700', OUTBOX_STALE_MS: '3000' })).toEqual([]);
    expect(problems({ PUBLISH_CONFIRM_TIMEOUT_MS: '9999' })).toEqual([]);
  });

  test('a timeout at or above the stale age is refused, naming both variables and their values', () => {
    expect(problems({ PUBLISH_CONFIRM_TIMEOUT_MS: '10000' })).toEqual([expect.stringMatching(BOTH)]);
    expect(problems({ OUTBOX_STALE_MS: '1500' })).toEqual(['PUBLISH_CONFIRM_TIMEOUT_MS (2000) must be below OUTBOX_STALE_MS (1500): a grab gives back an unsent order only before the sweeper republishes it as stale']);
    expect(problems({ OUTBOX_STALE_MS: '0' })).toEqual([expect.stringMatching(BOTH)]);
  });

  test('a process started with such a pair stops at once with that message', () => {
    let stderr = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '-e', "await import('./lib/env.ts')"], {
        env: { ...process.env, PUBLISH_CONFIRM_TIMEOUT_MS: '15000', OUTBOX_STALE_MS: '10000' },
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 30_000,
      });
    } catch (e) {
      stderr = String((e as { stderr?: string }).stderr);
    }
    expect(stderr).toMatch(/Invalid environment:\n {2}PUBLISH_CONFIRM_TIMEOUT_MS \(15000\) must be below OUTBOX_STALE_MS \(10000\)/);
  });
});
