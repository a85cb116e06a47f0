-- A flash sale behind a waiting room and a proof-of-work bot gate (docs/fair-sale.md#the-waiting-room).
-- A row here makes the sale's meta hash carry `room` = '1': the grab then needs a one-time grab
-- token, issued only to an admitted ticket whose holder solved the sale's challenge. Set once, at
-- creation (like tb_seckill_gate); pow_cost is the challenge's altcha maxnumber (the expected
-- work is half of it: ~1 s on a phone at the default, docs/fair-sale.md#the-bot-gate).
CREATE TABLE tb_seckill_room (
  voucher_id  BIGINT UNSIGNED NOT NULL,
  pow_cost    INT UNSIGNED    NOT NULL COMMENT 'altcha maxnumber of this sale''s challenge',
  create_time DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (voucher_id),
  CONSTRAINT ck_room_pow_cost CHECK (pow_cost BETWEEN 1000 AND 10000000)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
