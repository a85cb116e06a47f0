-- An order keeps the price it was placed at: a merchant may reprice a normal voucher while it is on
-- sale, and every later step (the charge, the notify's amount check, a refund) uses the order's own
-- price. Existing orders take their voucher's current price (the best that is known about them); an
-- order whose voucher is gone keeps 0, what it would have been charged before.
ALTER TABLE tb_voucher_order
  ADD COLUMN pay_value BIGINT UNSIGNED NULL COMMENT 'fen the buyer pays, fixed when the order is placed';

UPDATE tb_voucher_order o JOIN tb_voucher v ON v.id = o.voucher_id SET o.pay_value = v.pay_value WHERE o.pay_value IS NULL;

UPDATE tb_voucher_order SET pay_value = 0 WHERE pay_value IS NULL;

ALTER TABLE tb_voucher_order MODIFY COLUMN pay_value BIGINT UNSIGNED NOT NULL COMMENT 'fen the buyer pays, fixed when the order is placed';

-- Every call to the payment provider, written before the call (intent) and updated after it
-- (outcome), so money the provider moved is never known only to the provider.
--   charge: claimed before the provider is asked to charge. At most one live charge per order
--     (live_charge_order) and one per client Idempotency-Key (uk_attempt_idempotency): a second tap
--     or a concurrent retry finds the claim instead of charging again. intent = asked, outcome not
--     known yet; pending = the provider will notify; charged = the provider took the money, the
--     settlement (tb_payment + the order's 1 → 2) is not committed yet; settled = in tb_payment;
--     failed = the provider took nothing.
--   refund: written in the transaction that decides money goes back (a late payment, a refund the
--     merchant approved), then sent to the provider with its own id (refund_key) so a retry never
--     refunds twice. intent until the provider agrees, then done. closes_order: the merchant's
--     approval, whose completion moves the order 5 → 6.
-- The reconciler (lib/payment/reconcile.ts) retries what is left in intent / pending / charged.
CREATE TABLE tb_payment_attempt (
  id              BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  kind            ENUM('charge', 'refund') NOT NULL,
  order_id        BIGINT UNSIGNED NOT NULL,
  user_id         BIGINT UNSIGNED NOT NULL,
  provider        VARCHAR(16) NOT NULL,
  idempotency_key VARCHAR(64) NULL COMMENT 'charge: the client''s Idempotency-Key, per user',
  amount          BIGINT UNSIGNED NOT NULL COMMENT 'fen',
  txn_id          VARCHAR(64) NULL COMMENT 'charge: the provider''s transaction once known; refund: the transaction refunded',
  refund_of       BIGINT UNSIGNED NULL COMMENT 'refund: the tb_payment row it returns (one refund per payment)',
  closes_order    TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'refund approved by the merchant: done moves the order 5 → 6',
  status          ENUM('intent', 'pending', 'charged', 'settled', 'failed', 'done') NOT NULL DEFAULT 'intent',
  tries           INT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'provider calls that failed',
  last_error      VARCHAR(255) NULL,
  create_time     DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time     DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  live_charge_order BIGINT UNSIGNED AS (IF(kind = 'charge' AND status IN ('intent', 'pending', 'charged'), order_id, NULL)) PERSISTENT,
  PRIMARY KEY (id),
  UNIQUE KEY uk_live_charge (live_charge_order),
  UNIQUE KEY uk_attempt_idempotency (user_id, idempotency_key),
  UNIQUE KEY uk_refund_of (refund_of),
  KEY idx_attempt_order (order_id),
  KEY idx_attempt_owed (status, update_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
