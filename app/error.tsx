'use client';

/** Any page that throws (a dependency down, a bug) lands here: a way forward, no internals. */
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="mx-auto max-w-xl p-10 text-center">
      <p className="text-5xl font-bold text-gray-600">出错了</p>
      <h1 className="mt-4 text-lg font-medium" data-testid="error-page">服务暂时不可用，请稍后再试</h1>
      <button type="button" onClick={reset} className="mt-6 rounded bg-brand px-4 py-2 text-white" data-testid="error-retry">
        重试
      </button>
    </div>
  );
}
