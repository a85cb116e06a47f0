'use client';

/** Error state for console pages: a failed load says so and offers a retry, never internals. */
export default function AdminError({ reset }: { error: Error; reset: () => void }) {
  return (
    <div className="rounded-lg bg-white p-8 text-center shadow-sm" data-testid="admin-error">
      <p className="text-lg font-medium">页面加载失败</p>
      <p className="mt-2 text-sm text-gray-600">服务暂时不可用，请稍后重试。</p>
      <button type="button" onClick={reset} className="mt-4 rounded bg-brand px-4 py-2 text-white" data-testid="admin-error-retry">
        重试
      </button>
    </div>
  );
}
