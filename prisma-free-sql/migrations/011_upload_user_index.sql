-- Counting one user's stored images (the upload quota, UPLOAD_MAX_PER_USER) without a table scan.
ALTER TABLE tb_upload ADD KEY idx_upload_user (user_id);
