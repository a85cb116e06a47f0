import Link from 'next/link';

export default function NotFound() {
  return (
    <div className="mx-auto max-w-xl p-10 text-center">
      <p className="text-5xl font-bold text-gray-600">404</p>
      <h1 className="mt-4 text-lg font-medium" data-testid="not-found">页面不存在</h1>
      <Link href="/" className="mt-6 inline-block text-brand">返回首页</Link>
    </div>
  );
}
