'use client';

/** Shop edit form: sends only the changed fields to PUT /api/admin/shops/{id}; field errors inline. */
import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { api, ApiError } from '@/lib/web/client-api';
import { fenToYuan, yuanToFen } from '@/lib/admin/format';
import type { ShopEditView } from '@/lib/admin/shop-view';
import { Field, inputCls } from '@/app/admin/_components/field';

type Values = { name: string; typeId: string; images: string; area: string; address: string; x: string; y: string; avgPrice: string; openHours: string };

const toValues = (s: ShopEditView): Values => ({
  name: s.name,
  typeId: s.typeId,
  images: s.images.join('\n'),
  area: s.area,
  address: s.address,
  x: String(s.x),
  y: String(s.y),
  avgPrice: fenToYuan(s.avgPrice),
  openHours: s.openHours,
});

export function ShopForm({ shop, types }: { shop: ShopEditView; types: { id: string; name: string }[] }) {
  const router = useRouter();
  const [values, setValues] = useState<Values>(() => toValues(shop));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof Values) => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) => setValues((v) => ({ ...v, [k]: e.target.value }));

  function patch(): Record<string, unknown> | null {
    const orig = toValues(shop);
    const errs: Record<string, string> = {};
    const out: Record<string, unknown> = {};
    for (const k of ['name', 'typeId', 'area', 'address', 'openHours'] as const) if (values[k] !== orig[k]) out[k] = values[k];
    if (values.images !== orig.images) out.images = values.images.split('\n').map((s) => s.trim()).filter(Boolean);
    if (values.x !== orig.x || values.y !== orig.y) {
      const [x, y] = [Number(values.x), Number(values.y)];
      if (!Number.isFinite(x) || values.x.trim() === '') errs.x = '经度必须是数字';
      if (!Number.isFinite(y) || values.y.trim() === '') errs.y = '纬度必须是数字';
      Object.assign(out, { x, y });
    }
    if (values.avgPrice !== orig.avgPrice) {
      const fen = yuanToFen(values.avgPrice);
      if (fen === null) errs.avgPrice = '请输入正确的金额（元，最多两位小数）';
      out.avgPrice = fen;
    }
    setErrors(errs);
    return Object.keys(errs).length ? null : out;
  }

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setMessage(null);
    const body = patch();
    if (!body) return;
    if (Object.keys(body).length === 0) return setMessage({ ok: true, text: '没有修改' });
    setBusy(true);
    try {
      await api(`/api/admin/shops/${shop.id}`, { method: 'PUT', body });
      setMessage({ ok: true, text: '已保存' });
      router.refresh();
    } catch (err) {
      const ae = err as ApiError;
      setErrors(ae.fields ?? {});
      setMessage({ ok: false, text: ae.message });
    } finally {
      setBusy(false);
    }
  }

  const input = (k: keyof Values, label: string, extra: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <Field label={label} name={k} error={errors[k]}>
      <input id={`f-${k}`} className={inputCls} value={values[k]} onChange={set(k)} disabled={busy} data-testid={`shop-${k}`} {...extra} />
    </Field>
  );

  return (
    <form onSubmit={submit} noValidate className="space-y-4 rounded-lg bg-white p-5 shadow-sm" data-testid="shop-form">
      <div className="grid gap-4 md:grid-cols-2">
        {input('name', '店名', { maxLength: 128 })}
        <Field label="类型" name="typeId" error={errors.typeId}>
          <select id="f-typeId" className={inputCls} value={values.typeId} onChange={set('typeId')} disabled={busy} data-testid="shop-typeId">
            {types.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </Field>
        {input('area', '商圈', { maxLength: 128 })}
        {input('address', '地址', { maxLength: 255 })}
        {input('x', '经度', { inputMode: 'decimal' })}
        {input('y', '纬度', { inputMode: 'decimal' })}
        {input('avgPrice', '人均（元）', { inputMode: 'decimal' })}
        {input('openHours', '营业时间', { placeholder: '10:00-22:00' })}
      </div>
      <Field label="图片（每行一个地址）" name="images" error={errors.images}>
        <textarea id="f-images" className={inputCls} rows={3} value={values.images} onChange={set('images')} disabled={busy} data-testid="shop-images" />
      </Field>
      {message && (
        <p role="status" className={`text-sm ${message.ok ? 'text-green-700' : 'text-red-600'}`} data-testid="shop-result">
          {message.text}
        </p>
      )}
      <button type="submit" disabled={busy} className="rounded bg-brand px-5 py-2 text-white disabled:opacity-60" data-testid="shop-submit">
        {busy ? '保存中…' : '保存'}
      </button>
    </form>
  );
}
