import type { Metadata, Viewport } from 'next';
import { headers } from 'next/headers';
import './globals.css';

export const metadata: Metadata = {
  title: { default: '黑马点评', template: '%s · 黑马点评' },
  description: '本地生活 · 限时秒杀优惠券',
};
export const viewport: Viewport = { width: 'device-width', initialScale: 1, themeColor: '#ff6633' };

// Every page carries a per-request CSP nonce (proxy.ts), so pages render per request: reading the
// request headers here opts the whole tree into dynamic rendering, as nonces require.
export default async function RootLayout({ children }: { children: React.ReactNode }) {
  await headers();
  return (
    <html lang="zh-CN">
      <body>{children}</body>
    </html>
  );
}
