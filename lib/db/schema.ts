/**
 * Kysely's view of the tables in prisma-free-sql/migrations. BIGINT columns arrive as strings
 * (mysql2 `bigNumberStrings`), so every id is a string end to end and JSON never loses precision.
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { SocialTables } from '@/lib/db/social-schema';
import type { ReservationTables } from '@/lib/db/reservation-schema';

type Id = string;
type Timestamps = {
  create_time: ColumnType<Date, Date | undefined, never>;
  update_time: ColumnType<Date, Date | undefined, Date>;
};

export interface UserTable extends Timestamps {
  id: Generated<Id>;
  phone: string;
  password: string | null;
  nick_name: string;
  icon: Generated<string>;
  role: ColumnType<Role, Role | undefined, Role>;
}
export type Role = 'user' | 'merchant' | 'admin';

export interface UserInfoTable extends Timestamps {
  user_id: Id;
  city: Generated<string>;
  introduce: Generated<string>;
  gender: Generated<number>;
  birthday: Date | null;
  credits: Generated<number>;
  level: Generated<number>;
}

export interface ShopTypeTable extends Timestamps {
  id: Generated<Id>;
  name: string;
  icon: Generated<string>;
  sort: Generated<number>;
}

export interface ShopTable extends Timestamps {
  id: Generated<Id>;
  name: string;
  type_id: Id;
  images: Generated<string>;
  area: Generated<string>;
  address: string;
  x: number;
  y: number;
  avg_price: ColumnType<string, number | string, number | string>;
  sold: Generated<number>;
  comments: Generated<number>;
  score: Generated<number>;
  open_hours: Generated<string>;
  owner_id: Id | null;
}

export interface VoucherTable extends Timestamps {
  id: Generated<Id>;
  shop_id: Id;
  title: string;
  sub_title: Generated<string>;
  rules: Generated<string>;
  pay_value: ColumnType<string, number | string, number | string>;
  actual_value: ColumnType<string, number | string, number | string>;
  type: number;
  status: Generated<number>;
}
export const VoucherType = { NORMAL: 0, SECKILL: 1 } as const;
export const VoucherStatus = { ON_SALE: 1, TAKEN_DOWN: 2 } as const;
/** tb_voucher_order.stock_return: a cancelled or refunded seckill order's unit, taken back by MySQL, owed to Redis until the Redis step ran. */
export const StockReturn = { none: 0, owedToRedis: 1, done: 2 } as const;

export interface SeckillVoucherTable extends Timestamps {
  voucher_id: Id;
  initial_stock: number;
  stock: number;
  /** Redis stock buckets, 1..16 (migration 009, docs/buckets.md); fixed once the voucher exists. */
  buckets: Generated<number>;
  begin_time: Date;
  end_time: Date;
}

export interface VoucherOrderTable extends Timestamps {
  id: Id;
  user_id: Id;
  voucher_id: Id;
  pay_type: Generated<number>;
  status: Generated<number>;
  /** 1 seckill, 0 normal voucher (migration 002). */
  kind: Generated<number>;
  pay_time: Generated<Date | null>;
  use_time: Generated<Date | null>;
  cancel_time: Generated<Date | null>;
  cancel_reason: Generated<'buyer' | 'timeout' | null>;
  refund_request_time: Generated<Date | null>;
  refund_time: Generated<Date | null>;
  redeem_code: Generated<string | null>;
  /** 0 nothing owed, 1 unit returned in MySQL and owed to Redis, 2 returned in both. */
  stock_return: Generated<number>;
  live_seckill_user: ColumnType<Id | null, never, never>;
  /** Fen the buyer pays, fixed when the order is placed (migration 005). */
  pay_value: ColumnType<string, number | string, number | string>;
}

export interface PaymentTable extends Timestamps {
  id: Generated<Id>;
  order_id: Id;
  user_id: Id;
  provider: string;
  txn_id: string;
  idempotency_key: string | null;
  amount: number;
  status: 'paid' | 'refund_due' | 'refunded';
}

export type PaymentAttemptStatus = 'intent' | 'pending' | 'charged' | 'settled' | 'failed' | 'done';

/** One call to the payment provider: written before it, updated after it (migration 005). */
export interface PaymentAttemptTable {
  id: Generated<Id>;
  kind: 'charge' | 'refund';
  order_id: Id;
  user_id: Id;
  provider: string;
  idempotency_key: string | null;
  amount: ColumnType<string, number | string, number | string>;
  txn_id: string | null;
  refund_of: Id | null;
  closes_order: Generated<number>;
  status: ColumnType<PaymentAttemptStatus, PaymentAttemptStatus | undefined, PaymentAttemptStatus>;
  tries: Generated<number>;
  last_error: string | null;
  create_time: ColumnType<Date, Date | undefined, never>;
  update_time: ColumnType<Date, Date | undefined, Date>;
  live_charge_order: ColumnType<Id | null, never, never>;
}

export interface OrderDeadLetterTable extends Timestamps {
  id: Generated<Id>;
  order_id: Id | null;
  voucher_id: Id | null;
  user_id: Id | null;
  payload: string;
  reason: string;
  attempts: number;
  status: ColumnType<'dead' | 'replayed' | 'discarded', 'dead' | undefined, 'dead' | 'replayed' | 'discarded'>;
  /** A duplicate filed before migration 012: the row of its group that counts (outside the unique key). */
  superseded_by: ColumnType<Id | null, Id | null | undefined, Id | null>;
  /** Generated (migration 012): what a dead letter is filed once per (`o:<order id>`, `p:<body sha-256>`), or null. */
  once_key: ColumnType<string | null, never, never>;
}

/** An accepted grab the worker will never write (migration 004). */
export interface OrderFailureTable {
  order_id: Id;
  user_id: Id;
  voucher_id: Id;
  reason: 'ALREADY_BOUGHT' | 'UNCONFIRMED';
  kept_order_id: Id | null;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface AuditLogTable {
  id: Generated<Id>;
  actor_id: Id;
  action: string;
  target_type: string;
  target_id: string;
  before_json: string | null;
  after_json: string | null;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface Database extends SocialTables, ReservationTables {
  tb_user: UserTable;
  tb_user_info: UserInfoTable;
  tb_shop_type: ShopTypeTable;
  tb_shop: ShopTable;
  tb_voucher: VoucherTable;
  tb_seckill_voucher: SeckillVoucherTable;
  tb_voucher_order: VoucherOrderTable;
  tb_order_dead_letter: OrderDeadLetterTable;
  tb_order_failure: OrderFailureTable;
  tb_payment: PaymentTable;
  tb_payment_attempt: PaymentAttemptTable;
  tb_audit_log: AuditLogTable;
}

export type User = Selectable<UserTable>;
export type NewUser = Insertable<UserTable>;
export type Shop = Selectable<ShopTable>;
export type ShopUpdate = Updateable<ShopTable>;
export type ShopType = Selectable<ShopTypeTable>;
export type Voucher = Selectable<VoucherTable>;
export type SeckillVoucher = Selectable<SeckillVoucherTable>;
export type VoucherOrder = Selectable<VoucherOrderTable>;
