-- Order lifecycle: 1 unpaid → 2 paid → 3 used; 1 → 4 cancelled; 2 → 5 refunding → 6 refunded.
-- Each transition is one conditional UPDATE on (id, status) that also sets its time column.

ALTER TABLE tb_voucher_order
  ADD COLUMN kind TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1 seckill (one live order per user, stock), 0 normal voucher',
  ADD COLUMN pay_time DATETIME(3) NULL,
  ADD COLUMN use_time DATETIME(3) NULL,
  ADD COLUMN cancel_time DATETIME(3) NULL,
  ADD COLUMN cancel_reason ENUM('buyer', 'timeout') NULL,
  ADD COLUMN refund_request_time DATETIME(3) NULL,
  ADD COLUMN refund_time DATETIME(3) NULL,
  ADD COLUMN redeem_code CHAR(12) NULL COMMENT 'shown to the buyer once paid; the merchant types or scans it',
  ADD COLUMN stock_return TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '0 nothing owed, 1 returned in MySQL and owed to Redis, 2 returned in both',
  -- The user while a seckill order is live (not cancelled, not refunded), else NULL: the unique key
  -- below still refuses a second live seckill order, but lets a buyer whose order was cancelled grab
  -- again, and normal vouchers be bought more than once.
  ADD COLUMN live_seckill_user BIGINT UNSIGNED AS (IF(kind = 1 AND status IN (1, 2, 3, 5), user_id, NULL)) PERSISTENT,
  ADD UNIQUE KEY uk_voucher_live_user (voucher_id, live_seckill_user),
  ADD UNIQUE KEY uk_redeem_code (redeem_code),
  ADD KEY idx_status_created (status, create_time),
  ADD KEY idx_stock_return (stock_return, update_time),
  DROP INDEX uk_voucher_user;

CREATE TABLE tb_payment (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  order_id        BIGINT UNSIGNED NOT NULL,
  user_id         BIGINT UNSIGNED NOT NULL,
  provider        VARCHAR(16) NOT NULL,
  txn_id          VARCHAR(64) NOT NULL COMMENT 'the provider''s transaction id: a notify replayed is the same txn',
  idempotency_key VARCHAR(64) NULL COMMENT 'the client''s Idempotency-Key, per user',
  amount          BIGINT UNSIGNED NOT NULL COMMENT 'fen',
  status          ENUM('paid', 'refund_due', 'refunded') NOT NULL COMMENT 'refund_due: money arrived for an order that was no longer unpaid',
  create_time     DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time     DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_txn (provider, txn_id),
  UNIQUE KEY uk_user_idempotency (user_id, idempotency_key),
  KEY idx_order (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
