-- A dead letter filed once, by the database. insertDeadLetterOnce used INSERT ... SELECT ... WHERE
-- NOT EXISTS on this table: under REPEATABLE READ its read takes shared gap locks and, as a bulk
-- insert, the table's AUTO-INC lock for the statement, so two workers filing at once (any two
-- orders: new order ids share the last gap) deadlocked, and MariaDB reports that deadlock as
-- "Failed to read auto-increment value from storage engine" (1467), which the worker did not
-- retry: the loser's dead letter never reached the console. A unique key on what "once" means
-- lets the insert be a plain INSERT ... ON DUPLICATE KEY UPDATE (no AUTO-INC table lock, no gap read).
--   o:<order id>   while the order's row is dead or discarded (after a replay a new failure is
--                  filed again; after a discard never: see lib/order/order.repository.ts);
--   p:<sha-256>    a poison message's body (no order id to trust) while its row is dead.
-- superseded_by: a duplicate filed before this key existed, and the row of its group that counts
-- (a discarded one if the group has one, else the newest); it stays listed, outside the key.
ALTER TABLE tb_order_dead_letter
  ADD COLUMN superseded_by BIGINT UNSIGNED NULL COMMENT 'filed twice before migration 012: the row that counts';

UPDATE tb_order_dead_letter d
  JOIN (
    SELECT order_id, COALESCE(MAX(CASE WHEN status = 'discarded' THEN id END), MAX(id)) AS keep_id
    FROM tb_order_dead_letter
    WHERE order_id IS NOT NULL AND status IN ('dead', 'discarded')
    GROUP BY order_id
    HAVING COUNT(*) > 1
  ) k ON k.order_id = d.order_id
  SET d.superseded_by = k.keep_id
  WHERE d.status IN ('dead', 'discarded') AND d.id <> k.keep_id;

UPDATE tb_order_dead_letter d
  JOIN (
    SELECT SHA2(payload, 256) AS h, MAX(id) AS keep_id
    FROM tb_order_dead_letter
    WHERE order_id IS NULL AND status = 'dead'
    GROUP BY SHA2(payload, 256)
    HAVING COUNT(*) > 1
  ) k ON k.h = SHA2(d.payload, 256)
  SET d.superseded_by = k.keep_id
  WHERE d.order_id IS NULL AND d.status = 'dead' AND d.id <> k.keep_id;

ALTER TABLE tb_order_dead_letter
  ADD COLUMN once_key VARCHAR(66) CHARACTER SET ascii COLLATE ascii_bin AS (
    CASE
      WHEN superseded_by IS NOT NULL THEN NULL
      WHEN order_id IS NOT NULL AND status IN ('dead', 'discarded') THEN CONCAT('o:', order_id)
      WHEN order_id IS NULL AND status = 'dead' THEN CONCAT('p:', SHA2(payload, 256))
    END
  ) STORED,
  ADD UNIQUE KEY uk_dead_letter_once (once_key);
