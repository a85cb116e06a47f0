-- Reservation-only flash sales (docs/fair-sale.md). A sale with a row here is gated: only users
-- who reserved (first-come, mode 1) or who were drawn among them (draw, mode 2) may grab.
-- The draw's seed is made when the row is, and only its SHA-256 is shown until the draw has run
-- (seed_hash is the commitment, seed the reveal); drawn_time is set exactly once, by the one
-- transaction that holds this row's lock and finds it NULL.
CREATE TABLE tb_seckill_gate (
  voucher_id    BIGINT UNSIGNED  NOT NULL,
  mode          TINYINT UNSIGNED NOT NULL COMMENT '1 first-come among the reserved, 2 draw',
  reserve_begin DATETIME(3)      NOT NULL COMMENT 'reservations open; they close at the sale begin_time',
  seed          CHAR(64)         NOT NULL COMMENT '32 random bytes, hex; secret until drawn_time is set',
  seed_hash     CHAR(64)         NOT NULL COMMENT 'SHA-256 of the seed bytes, hex; public from the start',
  drawn_time    DATETIME(3)      NULL,
  reserved      INT UNSIGNED     NULL COMMENT 'reservations the draw saw',
  winners       INT UNSIGNED     NULL COMMENT 'min(stock, reserved)',
  create_time   DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (voucher_id),
  CONSTRAINT ck_gate_mode CHECK (mode IN (1, 2))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per live reservation (a cancel deletes it). won: NULL before the draw or in a
-- first-come sale, 1 drawn, 0 not drawn.
CREATE TABLE tb_seckill_reservation (
  voucher_id  BIGINT UNSIGNED  NOT NULL,
  user_id     BIGINT UNSIGNED  NOT NULL,
  won         TINYINT UNSIGNED NULL,
  create_time DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (voucher_id, user_id),
  KEY idx_reservation_time (voucher_id, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
