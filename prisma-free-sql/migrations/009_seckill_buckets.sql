-- Stock buckets (docs/buckets.md): a flash sale's stock spread over `buckets` Redis hash slots,
-- so several Redis Cluster masters share its grabs. 1 = one slot, the layout every sale had.
-- Fixed once the voucher exists (a user's home bucket is a function of it).
ALTER TABLE tb_seckill_voucher
  ADD COLUMN buckets TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT 'Redis stock buckets, 1..16' AFTER stock,
  ADD CONSTRAINT ck_buckets CHECK (buckets BETWEEN 1 AND 16);
