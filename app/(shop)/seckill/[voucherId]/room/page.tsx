import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { db } from '@/lib/db/client';
import { requirePageUser } from '@/lib/web/page-auth';
import { findRoomSale } from '@/lib/seckill/room/room.repository';
import { RoomView } from './room-view';

export const metadata: Metadata = { title: '排队抢购' };

/** The waiting room of a room sale (docs/fair-sale.md#the-waiting-page): logged-in visitors only. */
export default async function RoomPage({ params }: { params: Promise<{ voucherId: string }> }) {
  const { voucherId } = await params;
  if (!/^[1-9]\d{0,18}$/.test(voucherId)) notFound();
  await requirePageUser(`/seckill/${voucherId}/room`);
  const sale = await findRoomSale(db, voucherId);
  if (!sale) notFound();
  return <RoomView voucherId={voucherId} shopId={sale.shopId} title={sale.title} beginTime={sale.beginTime.toISOString()} endTime={sale.endTime.toISOString()} />;
}
