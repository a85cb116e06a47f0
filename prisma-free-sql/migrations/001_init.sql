-- hmdp-next initial schema. Frozen once landed: change the schema in a new numbered file.
-- Times are UTC (the pool sets time_zone = '+00:00'); money is integer fen.

CREATE TABLE tb_user (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  phone       VARCHAR(11)  NOT NULL,
  password    VARCHAR(128) NULL COMMENT 'scrypt hash; NULL for SMS-only consumers',
  nick_name   VARCHAR(32)  NOT NULL,
  icon        VARCHAR(255) NOT NULL DEFAULT '',
  role        ENUM('user','merchant','admin') NOT NULL DEFAULT 'user',
  create_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_phone (phone)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_user_info (
  user_id     BIGINT UNSIGNED NOT NULL,
  city        VARCHAR(64)  NOT NULL DEFAULT '',
  introduce   VARCHAR(128) NOT NULL DEFAULT '',
  gender      TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '0 unknown, 1 male, 2 female',
  birthday    DATE NULL,
  credits     INT UNSIGNED NOT NULL DEFAULT 0,
  level       TINYINT UNSIGNED NOT NULL DEFAULT 0,
  create_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_shop_type (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  name        VARCHAR(32)  NOT NULL,
  icon        VARCHAR(255) NOT NULL DEFAULT '',
  sort        INT UNSIGNED NOT NULL DEFAULT 0,
  create_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_shop (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  name        VARCHAR(128) NOT NULL,
  type_id     BIGINT UNSIGNED NOT NULL,
  images      VARCHAR(1024) NOT NULL DEFAULT '' COMMENT 'comma-separated image URLs',
  area        VARCHAR(128) NOT NULL DEFAULT '',
  address     VARCHAR(255) NOT NULL,
  x           DOUBLE NOT NULL COMMENT 'longitude',
  y           DOUBLE NOT NULL COMMENT 'latitude',
  avg_price   BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fen per person',
  sold        INT UNSIGNED NOT NULL DEFAULT 0,
  comments    INT UNSIGNED NOT NULL DEFAULT 0,
  score       TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'score x10, 0..50',
  open_hours  VARCHAR(32)  NOT NULL DEFAULT '',
  owner_id    BIGINT UNSIGNED NULL COMMENT 'the merchant user who runs this shop',
  create_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_name (name),
  KEY idx_type (type_id),
  KEY idx_owner (owner_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_voucher (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  shop_id      BIGINT UNSIGNED NOT NULL,
  title        VARCHAR(64)  NOT NULL,
  sub_title    VARCHAR(128) NOT NULL DEFAULT '',
  rules        VARCHAR(1024) NOT NULL DEFAULT '',
  pay_value    BIGINT UNSIGNED NOT NULL COMMENT 'fen the buyer pays',
  actual_value BIGINT UNSIGNED NOT NULL COMMENT 'fen the voucher is worth',
  type         TINYINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '0 normal, 1 seckill',
  status       TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1 on sale, 2 taken down',
  create_time  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_shop (shop_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_seckill_voucher (
  voucher_id    BIGINT UNSIGNED NOT NULL,
  initial_stock INT UNSIGNED NOT NULL COMMENT 'everything ever put on sale (grows with add-stock)',
  stock         INT UNSIGNED NOT NULL COMMENT 'remaining in the DB; initial_stock - orders',
  begin_time    DATETIME(3) NOT NULL,
  end_time      DATETIME(3) NOT NULL,
  create_time   DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time   DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (voucher_id),
  CONSTRAINT ck_window CHECK (end_time > begin_time),
  CONSTRAINT ck_stock CHECK (stock <= initial_stock)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_voucher_order (
  id          BIGINT UNSIGNED NOT NULL COMMENT 'from the Redis ID generator, never auto-increment',
  user_id     BIGINT UNSIGNED NOT NULL,
  voucher_id  BIGINT UNSIGNED NOT NULL,
  pay_type    TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1 balance, 2 alipay, 3 wechat',
  status      TINYINT UNSIGNED NOT NULL DEFAULT 1 COMMENT '1 unpaid, 2 paid, 3 used, 4 cancelled, 5 refunding, 6 refunded',
  create_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) COMMENT 'when the grab was accepted',
  update_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  -- The database itself refuses a second order by one user for one voucher.
  UNIQUE KEY uk_voucher_user (voucher_id, user_id),
  KEY idx_user (user_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_order_dead_letter (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  order_id    BIGINT UNSIGNED NULL COMMENT 'NULL when the message could not even be parsed',
  voucher_id  BIGINT UNSIGNED NULL,
  user_id     BIGINT UNSIGNED NULL,
  payload     TEXT NOT NULL COMMENT 'the message body as received',
  reason      VARCHAR(512) NOT NULL,
  attempts    INT UNSIGNED NOT NULL DEFAULT 0,
  status      ENUM('dead','replayed','discarded') NOT NULL DEFAULT 'dead',
  create_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_status (status, id),
  KEY idx_order (order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE tb_audit_log (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  actor_id    BIGINT UNSIGNED NOT NULL,
  action      VARCHAR(64)  NOT NULL COMMENT 'e.g. voucher.create, voucher.preheat, shop.update',
  target_type VARCHAR(32)  NOT NULL,
  target_id   VARCHAR(64)  NOT NULL,
  before_json TEXT NULL,
  after_json  TEXT NULL,
  create_time DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_target (target_type, target_id, id),
  KEY idx_actor (actor_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
