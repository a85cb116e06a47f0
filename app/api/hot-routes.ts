/**
 * The flash-sale hot routes the web server (workers/web-server.ts) answers on bare node:http,
 * never through Next. Each entry points at the route file's own exported handler: the App Router
 * file stays the one definition (auth, parsing, errors), this list only says which of them skip
 * the framework. Not a route file itself (Next routes only `route.ts`).
 */
import type { HotRoute } from '@/lib/hot/server';
import { grabTokenParam } from '@/lib/seckill/room/grab-gate';
import { POST as grab } from '@/app/api/seckill/[voucherId]/route';
import { GET as orderStatus } from '@/app/api/orders/[id]/route';
import { GET as shopVouchers } from '@/app/api/shops/[id]/vouchers/route';
import { GET as roomLook, POST as roomJoin } from '@/app/api/seckill/[voucherId]/room/route';
import { GET as roomChallenge } from '@/app/api/seckill/[voucherId]/room/challenge/route';
import { POST as roomToken } from '@/app/api/seckill/[voucherId]/room/token/route';

const roomGrab = (url: string): 'limit' | 'ceiling' => (grabTokenParam(url) === null ? 'limit' : 'ceiling');

export const hotRoutes: HotRoute[] = [
  // A grab with a room's grab token (`?g=`) comes from a visitor the room admitted at its paced
  // rate: only the ceiling refuses it (a forged token is refused in memory, without Redis).
  { name: 'grab', method: 'POST', path: '/api/seckill/[voucherId]', handler: grab, admission: roomGrab },
  { name: 'order', method: 'GET', path: '/api/orders/[id]', handler: orderStatus },
  { name: 'stock', method: 'GET', path: '/api/shops/[id]/vouchers', handler: shopVouchers },
  // The waiting room's join and look: every visitor of a room sale, once a second or so while they
  // wait. The room is the answer to a crowd, so the adaptive limit never sheds them (only the ceiling).
  { name: 'room', method: 'POST', path: '/api/seckill/[voucherId]/room', handler: roomJoin, admission: 'ceiling' },
  { name: 'room', method: 'GET', path: '/api/seckill/[voucherId]/room', handler: roomLook, admission: 'ceiling' },
  // Then the bot gate's challenge and the grab token, paced by the room's own admission rate.
  { name: 'room-gate', method: 'GET', path: '/api/seckill/[voucherId]/room/challenge', handler: roomChallenge, admission: 'ceiling' },
  { name: 'room-gate', method: 'POST', path: '/api/seckill/[voucherId]/room/token', handler: roomToken, admission: 'ceiling' },
];
