import Link from 'next/link';

/** The console's 403 view: a consumer, or a merchant looking at another merchant's things. */
export function Forbidden({ message = '该页面仅对商家和管理员开放' }: { message?: string }) {
  return (
    <div className="mx-auto max-w-lg p-10 text-center" data-testid="forbidden">
      <p className="text-5xl font-bold text-gray-600">403</p>
      <h1 className="mt-4 text-lg font-medium">没有权限访问</h1>
      <p className="mt-2 text-sm text-gray-600">{message}</p>
      <Link href="/" className="mt-6 inline-block text-brand" data-testid="forbidden-home">
        返回首页
      </Link>
    </div>
  );
}
