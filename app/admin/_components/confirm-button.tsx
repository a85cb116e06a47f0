'use client';

/**
 * A button that asks before it acts: opens a small dialog naming the consequence; the action runs
 * only on 确认. Shows the action's pending state and hands errors back to the caller.
 */
import { useEffect, useRef, useState } from 'react';

export function ConfirmButton({
  label,
  title,
  message,
  confirmLabel = '确认',
  danger = false,
  disabled = false,
  testId,
  onConfirm,
}: {
  label: string;
  title: string;
  message: React.ReactNode;
  confirmLabel?: string;
  danger?: boolean;
  disabled?: boolean;
  testId: string;
  onConfirm: () => Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const ok = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (open) ok.current?.focus();
  }, [open]);

  async function run() {
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
      setOpen(false);
    }
  }

  const tone = danger ? 'bg-red-600 text-white' : 'bg-brand text-white';
  return (
    <>
      <button type="button" disabled={disabled || busy} onClick={() => setOpen(true)} className={`rounded px-4 py-2 text-sm disabled:opacity-50 ${danger ? 'border border-red-300 text-red-700' : 'border border-gray-300 bg-white'}`} data-testid={testId}>
        {busy ? '处理中…' : label}
      </button>
      {open && (
        <div className="fixed inset-0 z-50 flex items-center justify-center bg-black/40 p-4" role="dialog" aria-modal="true" aria-labelledby={`${testId}-title`} onKeyDown={(e) => e.key === 'Escape' && !busy && setOpen(false)}>
          <div className="w-full max-w-sm rounded-lg bg-white p-5 shadow-xl" data-testid={`${testId}-dialog`}>
            <h2 id={`${testId}-title`} className="text-base font-semibold">
              {title}
            </h2>
            <div className="mt-2 text-sm text-gray-600">{message}</div>
            <div className="mt-5 flex justify-end gap-2">
              <button type="button" className="rounded border px-4 py-2 text-sm" onClick={() => setOpen(false)} disabled={busy} data-testid={`${testId}-cancel`}>
                取消
              </button>
              <button type="button" ref={ok} className={`rounded px-4 py-2 text-sm disabled:opacity-60 ${tone}`} onClick={run} disabled={busy} data-testid={`${testId}-confirm`}>
                {busy ? '处理中…' : confirmLabel}
              </button>
            </div>
          </div>
        </div>
      )}
    </>
  );
}
