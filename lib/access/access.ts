/**
 * Merchant scoping, enforced in services (never only in the UI): an admin manages everything, a
 * merchant only the shops whose tb_shop.owner_id is its user id, and the vouchers, orders and
 * dead letters of those shops. Consumers never get here (the route wrapper answers 403), and are
 * refused again here in case a caller forgets.
 */
import type { Executor } from '@/lib/db/client';
import type { Role } from '@/lib/db/schema';
import { AppError, notFound } from '@/lib/errors';
import { findShopRef, listShopRefs, type ShopRef } from '@/lib/access/access.repository';

export interface Actor {
  id: string;
  role: Role;
}

export const isAdmin = (actor: Actor) => actor.role === 'admin';

export function assertConsoleUser(actor: Actor): void {
  if (actor.role !== 'merchant' && actor.role !== 'admin') throw new AppError('FORBIDDEN', '需要商家或管理员权限');
}

export function assertAdmin(actor: Actor): void {
  if (actor.role !== 'admin') throw new AppError('FORBIDDEN', '需要管理员权限');
}

/** The owner filter for list queries: undefined (all) for an admin, the merchant's id otherwise. */
export function ownerScope(actor: Actor): string | undefined {
  assertConsoleUser(actor);
  return isAdmin(actor) ? undefined : actor.id;
}

/** Throws unless the actor may manage a shop with this owner. */
export function assertOwns(actor: Actor, ownerId: string | null, what = '该店铺'): void {
  assertConsoleUser(actor);
  if (!isAdmin(actor) && ownerId !== actor.id) throw new AppError('FORBIDDEN', `无权管理${what}`);
}

export async function requireShopAccess(db: Executor, actor: Actor, shopId: string): Promise<ShopRef> {
  assertConsoleUser(actor);
  const shop = await findShopRef(db, shopId);
  if (!shop) throw notFound('店铺');
  assertOwns(actor, shop.ownerId);
  return shop;
}

export async function listManagedShops(db: Executor, actor: Actor): Promise<ShopRef[]> {
  return listShopRefs(db, ownerScope(actor));
}
