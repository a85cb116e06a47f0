-- Accepted grabs that the worker will never write, and why (GET /api/orders/{id} answers 'failed').
--   ALREADY_BOUGHT: the buyer already holds a different live order of the same voucher — Redis forgot
--     their first grab (a failover, a restart without fsync) and accepted a second, and both messages
--     reached the worker. Written by the worker in the same transaction as the insert that skipped
--     it; kept_order_id is the order the buyer holds.
--   UNCONFIRMED: the grab's publish was never confirmed, so it answered 503 and gave its unit back;
--     the broker may still hold the message. Written by the grab before it gives the unit back,
--     only if the order is not in MySQL yet; the worker then never writes it.
-- Keyed by order id: recorded once, and a redelivered copy is never written later (not even after
-- the kept order is cancelled and the unique key would let it in).
CREATE TABLE tb_order_failure (
  order_id      BIGINT UNSIGNED NOT NULL,
  user_id       BIGINT UNSIGNED NOT NULL,
  voucher_id    BIGINT UNSIGNED NOT NULL,
  reason        ENUM('ALREADY_BOUGHT', 'UNCONFIRMED') NOT NULL,
  kept_order_id BIGINT UNSIGNED NULL COMMENT 'ALREADY_BOUGHT: the order of this voucher the buyer holds',
  create_time   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (order_id),
  KEY idx_failure_voucher (voucher_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
