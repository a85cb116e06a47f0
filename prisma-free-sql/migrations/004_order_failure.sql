-- Accepted grabs that the worker will never write, with the reason the buyer is shown
-- (GET /api/orders/{id} answers state 'failed'). Today one reason: the buyer already holds a
-- different live order of the same voucher — Redis forgot their first grab (a failover, a restart
-- without fsync) and accepted a second one, and both messages reached the worker. Written in the
-- same transaction as the insert that skipped it, keyed by order id, so it is recorded exactly once
-- and a redelivery of that message inserts nothing even after the kept order is cancelled.
CREATE TABLE tb_order_failure (
  order_id      BIGINT UNSIGNED NOT NULL,
  user_id       BIGINT UNSIGNED NOT NULL,
  voucher_id    BIGINT UNSIGNED NOT NULL,
  reason        ENUM('ALREADY_BOUGHT') NOT NULL,
  kept_order_id BIGINT UNSIGNED NULL COMMENT 'the order of this voucher the buyer holds',
  create_time   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (order_id),
  KEY idx_failure_voucher (voucher_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
