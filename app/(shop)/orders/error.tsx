'use client';

export default function OrdersError({ reset }: { error: Error; reset: () => void }) {
  return (
    <section className="p-8 text-center" data-testid="orders-error">
      <p className="text-gray-600">订单加载失败，请稍后再试</p>
      <button type="button" onClick={reset} className="mt-4 rounded-full bg-brand px-5 py-2 text-sm text-white" data-testid="orders-retry">
        重试
      </button>
    </section>
  );
}
