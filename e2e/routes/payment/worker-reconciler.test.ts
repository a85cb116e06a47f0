/**
 * The reconciler runs in the order worker process: a refund the merchant approved but the provider
 * refused is left owed (order 退款中); the worker, started as a real process, sends it again and the
 * order ends refunded, and its /metrics shows the outcome.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, closeDb } from '@/lib/db/client';
import { redis, closeRedis } from '@/lib/redis/client';
import { closeMq } from '@/lib/mq/connection';
import { callRoute } from '@/e2e/support/helpers';
import { createConsoleFixture, type ConsoleFixture } from '@/e2e/support/fixtures/admin';
import { createTestUsers, waitFor } from '@/e2e/support/fixtures/seckill';
import { POST as payRoute } from '@/app/api/orders/[id]/pay/route';
import { POST as buyRoute } from '@/app/api/vouchers/[id]/buy/route';
import { POST as refundRoute } from '@/app/api/orders/[id]/refund/route';
import { POST as approveRoute } from '@/app/api/admin/orders/[id]/refund/route';
import { insertNormalVoucher, orderRow } from '@/e2e/support/fixtures/order-lifecycle.repository';
import { setPaymentProviderForTests } from '@/lib/payment/provider';
import { countingProvider } from '@/e2e/support/fixtures/payment';
import { ageAttempts, attemptRowsOf, paymentRowsOf } from '@/e2e/support/fixtures/payment.repository';

const METRICS_PORT = 25611;
let f: ConsoleFixture;
let child: ChildProcess | undefined;

beforeAll(async () => {
  f = await createConsoleFixture(db, redis);
});

afterAll(async () => {
  setPaymentProviderForTests(null);
  child?.kill('SIGKILL');
  await Promise.all([closeMq(), closeDb(), closeRedis()]);
});

describe('the worker process reconciles payments', () => {
  it('a refused refund is sent again by the worker until it is done; the order ends 6 and /metrics counts it', async () => {
    // Charged and refused under the configured provider's name, so the worker's provider owns it.
    const p = countingProvider('dev');
    p.delayMs = 0;
    setPaymentProviderForTests(p);
    const voucherId = await insertNormalVoucher(db, f.shopA, 880);
    const [u] = await createTestUsers(db, redis, 1);
    const orderId = (await callRoute(buyRoute, { method: 'POST', token: u!.token, params: { id: voucherId } })).json.data.id as string;
    const post = (h: typeof payRoute, token: string) => callRoute(h, { method: 'POST', token, params: { id: orderId } });
    expect((await post(payRoute, u!.token)).status).toBe(200);
    expect((await post(refundRoute, u!.token)).status).toBe(200);
    p.refundFailures = 1;
    expect((await post(approveRoute, f.merchantA.token)).json.data).toEqual({ orderId, status: 5 });
    await ageAttempts(db, [orderId]);

    child = spawn(process.execPath, ['--import', 'tsx', 'workers/background.ts'], {
      env: { ...process.env, WORKER_METRICS_PORT: String(METRICS_PORT), PAYMENT_RECONCILE_INTERVAL_MS: '200', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor('the worker refunded it', async () => (await orderRow(db, orderId)).status === 6, 30_000, 200);
    expect(await paymentRowsOf(db, orderId)).toMatchObject([{ status: 'refunded' }]);
    expect((await attemptRowsOf(db, orderId)).filter((a) => a.kind === 'refund')).toMatchObject([{ status: 'done' }]);
    const metrics = await waitFor('the metrics endpoint', async () => {
      const res = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`).catch(() => null);
      const text = res?.ok ? await res.text() : '';
      return /hmdp_payment_reconcile_total\{outcome="refunded"\} [1-9]/.test(text) && text;
    }, 20_000, 200);
    expect(metrics).toMatch(/^hmdp_payment_owed\{kind="refund"\} \d+$/m);
    const exit = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    child = undefined;
  });
});
