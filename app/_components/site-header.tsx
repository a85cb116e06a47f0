import Link from 'next/link';
import { getPageUserIfAvailable } from '@/lib/web/page-auth';
import { LogoutButton } from '@/app/_components/logout-button';

/** Top bar on consumer pages: brand, and the nickname + logout, or a login link. */
export async function SiteHeader() {
  const user = await getPageUserIfAvailable();
  return (
    <header className="sticky top-0 z-10 flex h-12 items-center justify-between bg-brand px-4 text-white shadow">
      <Link href="/" className="font-semibold tracking-wide" data-testid="nav-home">
        黑马点评
      </Link>
      {user ? (
        <nav className="flex items-center gap-3 text-sm">
          <Link href="/feed" data-testid="nav-feed">关注</Link>
          <Link href="/orders" data-testid="nav-orders">我的订单</Link>
          {user.role !== 'user' && <Link href="/admin" data-testid="nav-admin">商家后台</Link>}
          <Link href="/me" className="max-w-28 truncate font-medium" data-testid="header-nickname">
            {user.nickName}
          </Link>
          <LogoutButton />
        </nav>
      ) : (
        <Link href="/login" className="rounded bg-black/20 px-3 py-1 text-sm" data-testid="nav-login">
          登录
        </Link>
      )}
    </header>
  );
}
