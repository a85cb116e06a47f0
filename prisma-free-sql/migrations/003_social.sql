-- The 点评 half: notes (探店笔记), their likes and comments, follows, sign-ins.
-- MySQL is the source of truth; every Redis structure (blog:liked, follows, feed, sign) is
-- rebuilt from these tables when it is missing.

CREATE TABLE tb_blog (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  shop_id     BIGINT UNSIGNED NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  title       VARCHAR(64)   NOT NULL,
  images      VARCHAR(1024) NOT NULL COMMENT 'comma-separated stored image names, 1 to 9',
  content     VARCHAR(2048) NOT NULL,
  liked       INT UNSIGNED  NOT NULL DEFAULT 0,
  comments    INT UNSIGNED  NOT NULL DEFAULT 0,
  fanout_at   DATETIME(3)   NULL COMMENT 'when the feed fan-out finished; NULL = the worker sweeper republishes it',
  create_time DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_blog_hot (liked, id),
  KEY idx_blog_shop (shop_id, id),
  KEY idx_blog_user (user_id, id),
  KEY idx_blog_fanout (fanout_at, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per (note, user) like: what blog:liked:{id} is rebuilt from, and what keeps the
-- count honest (tb_blog.liked moves only when a row is inserted or deleted).
CREATE TABLE tb_blog_like (
  blog_id     BIGINT UNSIGNED NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  create_time DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (blog_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_blog_comments (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  blog_id     BIGINT UNSIGNED NOT NULL,
  user_id     BIGINT UNSIGNED NOT NULL,
  content     VARCHAR(512)    NOT NULL,
  create_time DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_comment_blog (blog_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_follow (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  user_id        BIGINT UNSIGNED NOT NULL COMMENT 'the follower',
  follow_user_id BIGINT UNSIGNED NOT NULL COMMENT 'the one followed',
  create_time    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_follow (user_id, follow_user_id),
  KEY idx_follow_followed (follow_user_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row per user per Beijing day: what the sign:{userId}:{yyyyMM} bitmaps are rebuilt from.
CREATE TABLE tb_sign (
  user_id   BIGINT UNSIGNED NOT NULL,
  sign_date DATE            NOT NULL,
  PRIMARY KEY (user_id, sign_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
