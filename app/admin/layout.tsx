import type { Metadata } from 'next';
import Link from 'next/link';
import { forbidden } from 'next/navigation';
import { LogoutButton } from '@/app/_components/logout-button';
import { layoutUser } from '@/app/admin/_lib/gate';
import { PersistenceBanner } from '@/app/admin/_components/persistence-banner';

export const metadata: Metadata = { title: { default: '商家后台', template: '%s · 商家后台' } };

const NAV = [
  { href: '/admin/vouchers', label: '优惠券', id: 'vouchers' },
  { href: '/admin/redeem', label: '核销', id: 'redeem' },
  { href: '/admin/dead-letters', label: '死信', id: 'dead-letters' },
  { href: '/admin/shops', label: '店铺', id: 'shops' },
  { href: '/admin/traffic', label: '访客', id: 'traffic' },
  { href: '/admin/audit', label: '操作日志', id: 'audit' },
];

/**
 * Console chrome for merchants and admins; every page still checks the role itself. A consumer is
 * refused here, before the pages' loading boundary starts streaming, so the answer is a real 403.
 */
export default async function AdminLayout({ children }: { children: React.ReactNode }) {
  const user = await layoutUser();
  if (user && user.role === 'user') forbidden();
  const staff = user && (user.role === 'merchant' || user.role === 'admin');
  return (
    <div className="min-h-screen bg-gray-100">
      <header className="flex h-12 items-center justify-between bg-gray-900 px-4 text-white">
        <div className="flex items-center gap-6">
          <Link href="/admin" className="font-semibold" data-testid="admin-home">
            黑马点评 · 商家后台
          </Link>
          {staff && (
            <nav className="flex gap-1 text-sm" aria-label="后台导航">
              {[
                ...NAV,
                ...(user.role === 'admin'
                  ? [
                      { href: '/admin/users', label: '用户角色', id: 'users' },
                      { href: '/admin/payments', label: '待对账', id: 'payments' },
                    ]
                  : []),
              ].map((n) => (
                <Link key={n.id} href={n.href} className="rounded px-3 py-1.5 hover:bg-white/10" data-testid={`admin-nav-${n.id}`}>
                  {n.label}
                </Link>
              ))}
            </nav>
          )}
        </div>
        {user && (
          <div className="flex items-center gap-3 text-sm">
            <span data-testid="admin-user">
              {user.nickName}
              <span className="ml-1 text-xs text-gray-400">{user.role === 'admin' ? '管理员' : user.role === 'merchant' ? '商家' : '用户'}</span>
            </span>
            <Link href="/" className="text-gray-300 hover:text-white" data-testid="admin-to-site">
              前台
            </Link>
            <LogoutButton />
          </div>
        )}
      </header>
      {staff && <PersistenceBanner />}
      <main className="mx-auto max-w-6xl p-4 md:p-6">{children}</main>
    </div>
  );
}
