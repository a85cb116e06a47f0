'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { api, ApiError } from '@/lib/web/client-api';

type Upload = { key: string; file: string; progress: number; name?: string; url?: string; error?: string };

/** Uploads one file with XMLHttpRequest, the browser API that reports upload progress. */
function uploadFile(file: File, onProgress: (p: number) => void): Promise<{ name: string; url: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/api/uploads');
    xhr.setRequestHeader('content-type', file.type.startsWith('image/') ? file.type : 'application/octet-stream');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(Math.round((e.loaded / e.total) * 100));
    xhr.onload = () => {
      const body = (() => {
        try {
          return JSON.parse(xhr.responseText);
        } catch {
          return null;
        }
      })();
      if (xhr.status === 200 && body?.data) resolve(body.data);
      else reject(new Error(body?.error?.message ?? `上传失败 (${xhr.status})`));
    };
    xhr.onerror = () => reject(new Error('网络异常，上传失败'));
    xhr.send(file);
  });
}

export function BlogForm({ shops, initialShopId }: { shops: { id: string; name: string }[]; initialShopId: string }) {
  const router = useRouter();
  const [shopId, setShopId] = useState(initialShopId);
  const [title, setTitle] = useState('');
  const [content, setContent] = useState('');
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const update = (key: string, patch: Partial<Upload>) => setUploads((cur) => cur.map((u) => (u.key === key ? { ...u, ...patch } : u)));
  const ready = uploads.filter((u) => u.name);
  const uploading = uploads.some((u) => !u.name && !u.error);

  return (
    <form
      className="space-y-4 p-4"
      data-testid="blog-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError('');
        try {
          const r = await api<{ id: string }>('/api/blogs', { body: { shopId, title, content, images: ready.map((u) => u.name) } });
          router.push(`/blogs/${r.id}`);
        } catch (err) {
          setError(err instanceof ApiError ? err.message : '发布失败');
          setBusy(false);
        }
      }}
    >
      <label className="block text-sm">
        <span className="text-gray-600">店铺</span>
        <select value={shopId} onChange={(e) => setShopId(e.target.value)} className="mt-1 w-full rounded border border-gray-200 px-2 py-2" data-testid="blog-shop-select" required>
          <option value="">请选择</option>
          {shops.map((s) => (
            <option key={s.id} value={s.id}>{s.name}</option>
          ))}
        </select>
      </label>
      <div>
        <span className="text-sm text-gray-600">图片（1–9 张）</span>
        <ul className="mt-1 grid grid-cols-3 gap-2" data-testid="upload-list">
          {uploads.map((u) => (
            <li key={u.key} className="relative aspect-square overflow-hidden rounded bg-gray-100 text-xs" data-testid="upload-item" data-done={!!u.name}>
              {/* eslint-disable-next-line @next/next/no-img-element -- our own uploaded image */}
              {u.url && <img src={u.url} alt={u.file} className="h-full w-full object-cover" />}
              {!u.name && !u.error && (
                <span className="absolute inset-x-1 bottom-1">
                  <progress max={100} value={u.progress} className="w-full" aria-label={`${u.file} 上传进度`} />
                  <span className="block text-center text-gray-600">{u.progress}%</span>
                </span>
              )}
              {u.error && <span className="absolute inset-1 text-red-600">{u.error}</span>}
              <button type="button" className="absolute right-1 top-1 rounded-full bg-black/50 px-1.5 text-white" aria-label="移除" onClick={() => setUploads((cur) => cur.filter((x) => x.key !== u.key))}>
                ×
              </button>
            </li>
          ))}
          {uploads.length < 9 && (
            <li className="flex aspect-square items-center justify-center rounded border border-dashed border-gray-300 text-2xl text-gray-600">
              <label className="flex h-full w-full cursor-pointer items-center justify-center">
                +
                <input
                  type="file"
                  accept="image/*"
                  multiple
                  className="sr-only"
                  data-testid="blog-file-input"
                  onChange={(e) => {
                    const files = Array.from(e.target.files ?? []).slice(0, 9 - uploads.length);
                    e.target.value = '';
                    for (const file of files) {
                      const key = `${Date.now()}-${Math.random()}`;
                      setUploads((cur) => [...cur, { key, file: file.name, progress: 0 }]);
                      uploadFile(file, (progress) => update(key, { progress }))
                        .then((r) => update(key, { name: r.name, url: r.url, progress: 100 }))
                        .catch((err: Error) => update(key, { error: err.message }));
                    }
                  }}
                />
              </label>
            </li>
          )}
        </ul>
      </div>
      <label className="block text-sm">
        <span className="text-gray-600">标题</span>
        <input value={title} onChange={(e) => setTitle(e.target.value)} maxLength={64} required className="mt-1 w-full rounded border border-gray-200 px-2 py-2" data-testid="blog-title-input" />
      </label>
      <label className="block text-sm">
        <span className="text-gray-600">正文</span>
        <textarea value={content} onChange={(e) => setContent(e.target.value)} maxLength={2000} rows={6} required className="mt-1 w-full rounded border border-gray-200 px-2 py-2" data-testid="blog-content-input" />
      </label>
      {error && <p className="text-sm text-red-600" data-testid="blog-form-error">{error}</p>}
      <button type="submit" disabled={busy || uploading || ready.length === 0 || !shopId} className="w-full rounded-full bg-brand py-2.5 text-white disabled:opacity-50" data-testid="blog-submit">
        {uploading ? '图片上传中…' : busy ? '发布中…' : '发布笔记'}
      </button>
    </form>
  );
}
