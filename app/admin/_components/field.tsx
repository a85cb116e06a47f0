/** A labelled form field with its inline error, shared by the console forms. */
export function Field({ label, name, error, hint, children }: { label: string; name: string; error?: string; hint?: string; children: React.ReactNode }) {
  return (
    <label className="block" htmlFor={`f-${name}`}>
      <span className="mb-1 block text-sm font-medium text-gray-700">{label}</span>
      {children}
      {hint && !error && <span className="mt-1 block text-xs text-gray-600">{hint}</span>}
      {error && (
        <span role="alert" className="mt-1 block text-xs text-red-600" data-testid={`field-error-${name}`}>
          {error}
        </span>
      )}
    </label>
  );
}

export const inputCls = 'w-full rounded border border-gray-300 bg-white px-3 py-2 text-sm outline-none focus:border-brand disabled:bg-gray-100 disabled:text-gray-600';
