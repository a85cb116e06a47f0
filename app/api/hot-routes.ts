/**
 * The flash-sale hot routes the web server (workers/web-server.ts) answers on bare node:http,
 * never through Next. Each entry points at the route file's own exported handler: the App Router
 * file stays the one definition (auth, parsing, errors), this list only says which of them skip
 * the framework. Not a route file itself (Next routes only `route.ts`).
 */
import type { HotRoute } from '@/lib/hot/server';
import { POST as grab } from '@/app/api/seckill/[voucherId]/route';
import { GET as orderStatus } from '@/app/api/orders/[id]/route';
import { GET as shopVouchers } from '@/app/api/shops/[id]/vouchers/route';

export const hotRoutes: HotRoute[] = [
  { name: 'grab', method: 'POST', path: '/api/seckill/[voucherId]', handler: grab },
  { name: 'order', method: 'GET', path: '/api/orders/[id]', handler: orderStatus },
  { name: 'stock', method: 'GET', path: '/api/shops/[id]/vouchers', handler: shopVouchers },
];
