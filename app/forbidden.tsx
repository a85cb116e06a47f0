import { Forbidden } from '@/app/admin/_components/forbidden';

/** Rendered with HTTP 403 wherever a page calls forbidden(). */
export default function ForbiddenPage() {
  return <Forbidden message="该页面仅对商家和管理员开放；商家只能管理自己的店铺和优惠券" />;
}
