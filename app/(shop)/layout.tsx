import { SiteHeader } from '@/app/_components/site-header';

export default function ShopLayout({ children }: { children: React.ReactNode }) {
  return (
    <div className="mx-auto min-h-screen max-w-xl bg-white shadow-sm">
      <SiteHeader />
      <main>{children}</main>
    </div>
  );
}
