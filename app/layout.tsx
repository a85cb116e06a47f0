import type { Metadata, Viewport } from 'next';
import './globals.css';

export const metadata: Metadata = {
  title: { default: '黑马点评', template: '%s · 黑马点评' },
  description: '本地生活 · 限时秒杀优惠券',
};
export const viewport: Viewport = { width: 'device-width', initialScale: 1, themeColor: '#ff6633' };

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="zh-CN">
      <body>{children}</body>
    </html>
  );
}
