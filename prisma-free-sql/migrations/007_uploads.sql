-- Who uploaded each stored image and which note it belongs to. An upload starts unattached
-- (blog_id NULL); publishing a note claims its images (only the uploader's own, each for one note);
-- deleting the note deletes its pictures; the worker removes uploads left unattached for a day, and
-- rows whose note is gone (a deletion interrupted between its commit and the file removal).
-- Images stored before this table existed have no row: a note's deletion still removes them.
CREATE TABLE tb_upload (
  name        VARCHAR(64)     NOT NULL COMMENT 'the stored file name: 32 hex + .webp',
  user_id     BIGINT UNSIGNED NOT NULL,
  blog_id     BIGINT UNSIGNED NULL,
  create_time DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name),
  KEY idx_upload_blog_time (blog_id, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
