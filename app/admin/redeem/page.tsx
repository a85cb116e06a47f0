import type { Metadata } from 'next';
import { consoleUser } from '@/app/admin/_lib/gate';
import { RedeemForm } from '@/app/admin/_components/redeem-form';

export const metadata: Metadata = { title: '核销' };

export default async function RedeemPage() {
  await consoleUser('/admin/redeem');
  return (
    <section className="max-w-lg space-y-4">
      <div>
        <h1 className="text-xl font-semibold">核销</h1>
        <p className="mt-1 text-sm text-gray-600">输入顾客出示的 12 位核销码（扫码枪扫描二维码会直接填入）。只能核销本店铺的已支付订单，每张只能核销一次。</p>
      </div>
      <RedeemForm />
    </section>
  );
}
