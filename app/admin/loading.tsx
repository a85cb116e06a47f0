export default function Loading() {
  return (
    <div className="animate-pulse space-y-3 p-4" data-testid="admin-loading" aria-busy="true">
      <div className="h-6 w-40 rounded bg-gray-200" />
      <div className="h-24 rounded bg-gray-200" />
      <div className="h-24 rounded bg-gray-200" />
    </div>
  );
}
