'use client';

/**
 * Create / edit form for vouchers. Money is typed in yuan and sent in fen; times are picked as
 * Beijing wall time (whatever the browser's zone) and sent as ISO UTC. The server validates
 * everything again; its field errors show inline under the field they name.
 */
import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiError } from '@/lib/web/client-api';
import { fenToYuan, isoToShanghaiLocal, shanghaiLocalToIso, yuanToFen } from '@/lib/admin/format';
import type { VoucherView } from '@/lib/voucher/voucher.view';
import { Field, inputCls } from '@/app/admin/_components/field';

type Values = Record<'shopId' | 'type' | 'title' | 'subTitle' | 'rules' | 'payValue' | 'actualValue' | 'stock' | 'beginTime' | 'endTime', string>;
type Errors = Partial<Record<keyof Values | 'amount' | 'reservation' | 'reservation.reserveBegin' | 'room' | 'buckets', string>>;
/** A new flash sale may be reservation-only (docs/fair-sale.md#making-a-sale-reservation-only); set once, at creation. */
type Gate = { mode: '' | 'first-come' | 'draw'; reserveBegin: string };

function initial(v: VoucherView | undefined, shopId: string): Values {
  const soon = new Date(Date.now() + 3600_000);
  return {
    shopId: v?.shopId ?? shopId,
    type: String(v?.type ?? 1),
    title: v?.title ?? '',
    subTitle: v?.subTitle ?? '',
    rules: v?.rules ?? '',
    payValue: v ? fenToYuan(v.payValue) : '',
    actualValue: v ? fenToYuan(v.actualValue) : '',
    stock: v?.seckill ? String(v.seckill.initialStock) : '100',
    beginTime: isoToShanghaiLocal(v?.seckill?.beginTime ?? soon),
    endTime: isoToShanghaiLocal(v?.seckill?.endTime ?? new Date(soon.getTime() + 7 * 86_400_000)),
  };
}

/** Which fields an edit may touch in each state (the server enforces the same rules). */
function editable(v: VoucherView | undefined): Set<keyof Values> {
  if (!v) return new Set(['shopId', 'type', 'title', 'subTitle', 'rules', 'payValue', 'actualValue', 'stock', 'beginTime', 'endTime']);
  if (v.state === 'taken_down') return new Set();
  const s = new Set<keyof Values>(['title', 'subTitle', 'rules']);
  if (!v.seckill || v.state === 'upcoming') s.add('payValue').add('actualValue');
  if (v.seckill && v.state !== 'ended') s.add('stock').add('endTime');
  if (v.seckill && v.state === 'upcoming') s.add('beginTime');
  return s;
}

export function VoucherForm({ shops, voucher, defaultShopId = '' }: { shops?: { id: string; name: string }[]; voucher?: VoucherView; defaultShopId?: string }) {
  const router = useRouter();
  const [values, setValues] = useState<Values>(() => initial(voucher, defaultShopId || shops?.[0]?.id || ''));
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [gate, setGate] = useState<Gate>(() => ({ mode: '', reserveBegin: isoToShanghaiLocal(new Date()) }));
  // Behind the waiting room and the bot gate (docs/fair-sale.md#the-waiting-room): '' off, else the proof-of-work cost.
  const [room, setRoom] = useState<string>('');
  /** Redis stock buckets (docs/buckets.md), set once at creation. */
  const [buckets, setBuckets] = useState('1');
  const can = editable(voucher);
  const seckill = values.type === '1';
  const set = (k: keyof Values) => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) => setValues((v) => ({ ...v, [k]: e.target.value }));

  /** Client-side parsing of what only the browser knows (yuan text, local times); null when invalid. */
  function toBody(): Record<string, unknown> | null {
    const errs: Errors = {};
    const pay = yuanToFen(values.payValue);
    const actual = yuanToFen(values.actualValue);
    if (pay === null) errs.payValue = '请输入正确的金额（元，最多两位小数）';
    if (actual === null) errs.actualValue = '请输入正确的金额（元，最多两位小数）';
    const stock = /^\d+$/.test(values.stock.trim()) ? Number(values.stock) : null;
    const begin = shanghaiLocalToIso(values.beginTime);
    const end = shanghaiLocalToIso(values.endTime);
    const reserveBegin = gate.mode ? shanghaiLocalToIso(gate.reserveBegin) : null;
    if (seckill && gate.mode && !reserveBegin) errs['reservation.reserveBegin'] = '请选择预约开始时间';
    const bucketCount = /^\d+$/.test(buckets.trim()) ? Number(buckets) : null;
    if (seckill && !voucher && (bucketCount === null || bucketCount < 1 || bucketCount > 16)) errs.buckets = '分桶数必须是 1 ~ 16 的整数';
    if (seckill) {
      if (stock === null) errs.stock = '库存必须是正整数';
      if (!begin) errs.beginTime = '请选择开始时间';
      if (!end) errs.endTime = '请选择结束时间';
    }
    setErrors(errs);
    if (Object.keys(errs).length > 0) return null;
    const body: Record<string, unknown> = { title: values.title, subTitle: values.subTitle, rules: values.rules, payValue: pay, actualValue: actual };
    if (seckill) Object.assign(body, { stock, beginTime: begin, endTime: end });
    if (!voucher) {
      const reservation = seckill && gate.mode ? { reservation: { mode: gate.mode, reserveBegin } } : {};
      const waitingRoom = seckill && room ? { room: { powCost: Number(room) } } : {};
      const bucketed = seckill && bucketCount !== null && bucketCount > 1 ? { buckets: bucketCount } : {};
      return { shopId: values.shopId, type: Number(values.type), ...body, ...reservation, ...waitingRoom, ...bucketed };
    }
    // Edits send only what changed and what the state allows.
    const before = toBodyOf(initial(voucher, ''));
    return Object.fromEntries(Object.entries(body).filter(([k, v]) => can.has(k as keyof Values) && v !== before[k]));
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setFormError(null);
    setNotice(null);
    const body = toBody();
    if (!body) return;
    if (voucher && Object.keys(body).length === 0) return setNotice('没有修改');
    setBusy(true);
    try {
      if (!voucher) {
        const r = await api<{ id: string; preheated?: boolean }>('/api/admin/vouchers', { body });
        router.push(`/admin/vouchers/${r.id}${r.preheated === false ? '?preheat=failed' : ''}`);
        return;
      }
      const r = await api<{ redisSynced: boolean }>(`/api/admin/vouchers/${voucher.id}`, { method: 'PATCH', body });
      setNotice(r.redisSynced ? '已保存' : '已保存，但 Redis 同步失败，请点击“预热 / 修复”');
      router.refresh();
    } catch (err) {
      const ae = err as ApiError;
      setErrors((ae.fields ?? {}) as Errors);
      setFormError(ae.message);
    } finally {
      setBusy(false);
    }
  }

  const disabled = (k: keyof Values) => busy || !can.has(k);
  return (
    <form onSubmit={submit} noValidate className="space-y-4 rounded-lg bg-white p-5 shadow-sm" data-testid="voucher-form">
      {!voucher && (
        <div className="grid gap-4 md:grid-cols-2">
          <Field label="店铺" name="shopId" error={errors.shopId}>
            <select id="f-shopId" className={inputCls} value={values.shopId} onChange={set('shopId')} data-testid="voucher-shop" disabled={busy}>
              {shops?.map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="类型" name="type" error={errors.type}>
            <select id="f-type" className={inputCls} value={values.type} onChange={set('type')} data-testid="voucher-type" disabled={busy}>
              <option value="1">秒杀券（限量、限时）</option>
              <option value="0">普通券</option>
            </select>
          </Field>
        </div>
      )}
      <Field label="标题" name="title" error={errors.title} hint="最多 64 个字">
        <input id="f-title" className={inputCls} value={values.title} onChange={set('title')} maxLength={64} data-testid="voucher-title" disabled={disabled('title')} />
      </Field>
      <Field label="副标题" name="subTitle" error={errors.subTitle}>
        <input id="f-subTitle" className={inputCls} value={values.subTitle} onChange={set('subTitle')} maxLength={128} data-testid="voucher-subtitle" disabled={disabled('subTitle')} />
      </Field>
      <Field label="使用规则" name="rules" error={errors.rules}>
        <textarea id="f-rules" className={inputCls} rows={3} value={values.rules} onChange={set('rules')} maxLength={1024} data-testid="voucher-rules" disabled={disabled('rules')} />
      </Field>
      <div className="grid gap-4 md:grid-cols-2">
        <Field label="售价（元）" name="payValue" error={errors.payValue}>
          <input id="f-payValue" className={inputCls} inputMode="decimal" value={values.payValue} onChange={set('payValue')} placeholder="如 59.9" data-testid="voucher-pay" disabled={disabled('payValue')} />
        </Field>
        <Field label="面值（元）" name="actualValue" error={errors.actualValue}>
          <input id="f-actualValue" className={inputCls} inputMode="decimal" value={values.actualValue} onChange={set('actualValue')} placeholder="如 100" data-testid="voucher-actual" disabled={disabled('actualValue')} />
        </Field>
      </div>
      {seckill && (
        <div className="grid gap-4 md:grid-cols-3">
          <Field label={voucher ? '总库存' : '库存'} name="stock" error={errors.stock} hint={voucher?.seckill ? `已售 ${voucher.seckill.initialStock - voucher.seckill.stock}，不能低于已售` : '1 ~ 1,000,000'}>
            <input id="f-stock" className={inputCls} inputMode="numeric" value={values.stock} onChange={set('stock')} data-testid="voucher-stock" disabled={disabled('stock')} />
          </Field>
          <Field label="开始时间（北京时间）" name="beginTime" error={errors.beginTime}>
            <div className="flex gap-2">
              <input id="f-beginTime" type="datetime-local" className={inputCls} value={values.beginTime} onChange={set('beginTime')} data-testid="voucher-begin" disabled={disabled('beginTime')} />
              {!disabled('beginTime') && (
                <button type="button" className="shrink-0 rounded border px-2 text-xs" data-testid="voucher-begin-now" onClick={() => setValues((v) => ({ ...v, beginTime: isoToShanghaiLocal(new Date()) }))}>
                  现在
                </button>
              )}
            </div>
          </Field>
          <Field label="结束时间（北京时间）" name="endTime" error={errors.endTime}>
            <input id="f-endTime" type="datetime-local" className={inputCls} value={values.endTime} onChange={set('endTime')} data-testid="voucher-end" disabled={disabled('endTime')} />
          </Field>
        </div>
      )}
      {seckill && !voucher && (
        <div className="grid gap-4 md:grid-cols-3">
          <Field label="库存分桶" name="buckets" error={errors.buckets} hint="1 ~ 16；超热门券按 Redis 主节点数分桶，分摊抢购；创建后不能更改">
            <input id="f-buckets" className={inputCls} inputMode="numeric" value={buckets} onChange={(e) => setBuckets(e.target.value)} data-testid="voucher-buckets" disabled={busy} />
          </Field>
        </div>
      )}
      {seckill && !voucher && (
        <div className="grid gap-4 md:grid-cols-2">
          <Field label="预约" name="reservationMode" error={errors.reservation} hint="仅限预约用户抢购；创建后不能更改">
            <select
              id="f-reservationMode"
              className={inputCls}
              value={gate.mode}
              onChange={(e) => setGate((g) => ({ ...g, mode: e.target.value as Gate['mode'] }))}
              data-testid="voucher-reservation-mode"
              disabled={busy}
            >
              <option value="">无需预约（先到先得）</option>
              <option value="first-come">预约用户先到先得</option>
              <option value="draw">预约抽签（按库存抽中签者）</option>
            </select>
          </Field>
          {gate.mode && (
            <Field label="预约开始时间（北京时间）" name="reserveBegin" error={errors['reservation.reserveBegin']} hint="开抢时预约截止">
              <input
                id="f-reserveBegin"
                type="datetime-local"
                className={inputCls}
                value={gate.reserveBegin}
                onChange={(e) => setGate((g) => ({ ...g, reserveBegin: e.target.value }))}
                data-testid="voucher-reserve-begin"
                disabled={busy}
              />
            </Field>
          )}
          <Field label="排队与人机验证" name="room" error={errors.room} hint="开售时先排队、再做约 1 秒的工作量证明，脚本难以刷单；创建后不能更改">
            <select id="f-room" className={inputCls} value={room} onChange={(e) => setRoom(e.target.value)} data-testid="voucher-room" disabled={busy}>
              <option value="">不排队（直接抢购）</option>
              <option value="20000">排队 + 轻度验证（手机约 0.5 秒）</option>
              <option value="50000">排队 + 标准验证（手机约 1 秒）</option>
              <option value="200000">排队 + 严格验证（手机约 4 秒）</option>
            </select>
          </Field>
        </div>
      )}
      {formError && (
        <p role="alert" className="rounded bg-red-50 px-3 py-2 text-sm text-red-700" data-testid="form-error">
          {formError}
        </p>
      )}
      {notice && <p className="text-sm text-green-700" data-testid="form-notice">{notice}</p>}
      {can.size > 0 && (
        <button type="submit" disabled={busy} className="rounded bg-brand px-5 py-2 text-white disabled:opacity-60" data-testid="voucher-submit">
          {busy ? '提交中…' : voucher ? '保存修改' : '创建'}
        </button>
      )}
    </form>
  );
}

/** The body an unchanged form would send, to diff edits against. */
function toBodyOf(v: Values): Record<string, unknown> {
  return {
    title: v.title,
    subTitle: v.subTitle,
    rules: v.rules,
    payValue: yuanToFen(v.payValue),
    actualValue: yuanToFen(v.actualValue),
    stock: Number(v.stock),
    beginTime: shanghaiLocalToIso(v.beginTime),
    endTime: shanghaiLocalToIso(v.endTime),
  };
}
