import Link from 'next/link';

// Replaced by the shop list (shop cache issue); kept minimal so the login journey has a home.
export default function HomePage() {
  return (
    <section className="p-6">
      <h1 className="text-xl font-semibold">黑马点评</h1>
      <p className="mt-2 text-gray-500">发现身边好店，抢限时优惠券。</p>
      <Link href="/me" className="mt-4 inline-block text-brand" data-testid="home-me">我的</Link>
    </section>
  );
}
