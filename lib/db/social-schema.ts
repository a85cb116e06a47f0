/** Kysely's view of the 点评 tables (prisma-free-sql/migrations/003_social.sql). */
import type { ColumnType, Generated } from 'kysely';

type Id = string;

export interface BlogTable {
  id: Generated<Id>;
  shop_id: Id;
  user_id: Id;
  title: string;
  images: string;
  content: string;
  liked: Generated<number>;
  comments: Generated<number>;
  /** When the feed fan-out finished; null until then (the sweeper republishes old nulls). */
  fanout_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  create_time: ColumnType<Date, Date | undefined, never>;
  update_time: ColumnType<Date, Date | undefined, Date>;
}

export interface BlogLikeTable {
  blog_id: Id;
  user_id: Id;
  /** When the user liked the note: the ZSET's score, which a later like of a burst moves. */
  create_time: ColumnType<Date, Date | undefined, Date>;
}

export interface BlogCommentTable {
  id: Generated<Id>;
  blog_id: Id;
  user_id: Id;
  content: string;
  create_time: ColumnType<Date, Date | undefined, never>;
  update_time: ColumnType<Date, Date | undefined, Date>;
}

export interface FollowTable {
  id: Generated<Id>;
  user_id: Id;
  follow_user_id: Id;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface SignTable {
  user_id: Id;
  /** A Beijing calendar day as 'YYYY-MM-DD' (mysql2 returns DATE as a Date at UTC midnight). */
  sign_date: ColumnType<Date, string, never>;
}

/** prisma-free-sql/migrations/007_uploads.sql: stored images, their uploader and their note. */
export interface UploadTable {
  name: string;
  user_id: Id;
  blog_id: Id | null;
  create_time: ColumnType<Date, Date | undefined, never>;
}

export interface SocialTables {
  tb_blog: BlogTable;
  tb_blog_like: BlogLikeTable;
  tb_blog_comments: BlogCommentTable;
  tb_follow: FollowTable;
  tb_sign: SignTable;
  tb_upload: UploadTable;
}
