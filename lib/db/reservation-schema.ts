/** Kysely's view of the fair-sale tables (migrations 008_reservation.sql, 010_waiting_room.sql). */
import type { ColumnType } from 'kysely';

type Id = string;

export interface SeckillGateTable {
  voucher_id: Id;
  /** 1 first-come among the reserved, 2 draw. */
  mode: number;
  reserve_begin: Date;
  seed: string;
  seed_hash: string;
  drawn_time: ColumnType<Date | null, Date | null | undefined, Date | null>;
  reserved: ColumnType<number | null, number | null | undefined, number | null>;
  winners: ColumnType<number | null, number | null | undefined, number | null>;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface SeckillReservationTable {
  voucher_id: Id;
  user_id: Id;
  won: ColumnType<number | null, number | null | undefined, number | null>;
  create_time: ColumnType<Date, Date | undefined, never>;
}

/** A sale behind the waiting room and the bot gate (migration 010_waiting_room.sql). */
export interface SeckillRoomTable {
  voucher_id: Id;
  /** The altcha challenge's maxnumber. */
  pow_cost: number;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface ReservationTables {
  tb_seckill_gate: SeckillGateTable;
  tb_seckill_reservation: SeckillReservationTable;
  tb_seckill_room: SeckillRoomTable;
}
