export default function OrdersLoading() {
  return (
    <section className="space-y-3 p-4" aria-busy="true" data-testid="orders-loading">
      <div className="h-6 w-24 animate-pulse rounded bg-gray-200" />
      {[0, 1, 2].map((i) => (
        <div key={i} className="h-24 animate-pulse rounded-lg bg-white shadow-sm" />
      ))}
    </section>
  );
}
