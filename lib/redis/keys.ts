/**
 * Every Redis key the product writes, in one place. The `{...}` hash tag keeps the keys one
 * script touches in one Redis Cluster slot.
 */
export const keys = {
  loginCode: (phone: string) => `login:code:{${phone}}`,
  loginCodeTries: (phone: string) => `login:code:{${phone}}:tries`,
  session: (token: string) => `login:session:{${token}}`,
  /** Set of a user's live session tokens, so "log out everywhere" and role changes can revoke them. */
  userSessions: (userId: string) => `login:user-sessions:{${userId}}`,
  /** Pub/sub channel: `t:<token>` or `u:<userId>` was revoked, forget it in every process's session cache (lib/auth/session-cache.ts). */
  sessionsChanged: () => 'login:sessions-changed',
  devSms: (phone: string) => `dev:sms:{${phone}}`,
  shop: (id: string) => `cache:shop:{${id}}`,
  /** The tag puts the key and its fence record (lib/lock fenced writes) in one slot, like every cache key. */
  shopTypeList: () => 'cache:shop-type:{list}',
  /** Ids of one type's shops in the default order (most sold first). */
  shopIdsByType: (typeId: string) => `cache:shop-ids:{${typeId}}`,
  shopVouchers: (shopId: string) => `cache:shop-vouchers:{${shopId}}`,
  /** Set of hot shop ids (logical expiration instead of TTL), written by npm run cache:warm. */
  hotShops: () => 'cache:shop-hot:{ids}',
  shopGeo: (typeId: string) => `geo:shop:{${typeId}}`,
  /** Present once geo:shop:{typeId} was loaded from the DB (an empty type has no GEO key at all). */
  shopGeoReady: (typeId: string) => `geo:shop:{${typeId}}:ready`,
  shopLock: (id: string) => `lock:shop:{${id}}`,
  /** Distributed lock named `name` (lib/lock): hash {owner, count, fence}, its fencing counter, its release channel. */
  lock: (name: string) => `lock:{${name}}`,
  lockFence: (name: string) => `lock:{${name}}:fence`,
  lockReleased: (name: string) => `lock:{${name}}:released`,
  /** The multi-node (redlock) lock of the same name lives under its own key on each node. */
  lockMulti: (name: string) => `lock:{${name}}:multi`,
  /** Newest fencing token that wrote or invalidated `key` (lib/lock fenced writes); same hash tag as `key`. */
  fenceRecord: (key: string) => `${key}:fence`,
  seckillMeta: (vid: string) => `seckill:{${vid}}:meta`,
  seckillStock: (vid: string) => `seckill:{${vid}}:stock`,
  seckillBuyers: (vid: string) => `seckill:{${vid}}:buyers`,
  seckillPending: (vid: string) => `seckill:{${vid}}:pending`,
  /** Order ids whose unit a cancel or refund already gave back to Redis (makes the return idempotent). */
  seckillReturned: (vid: string) => `seckill:{${vid}}:returned`,
  /** Users who gave a unit of this sale back (cancelled, timed out, refunded): the grab refuses them. */
  seckillForfeit: (vid: string) => `seckill:{${vid}}:forfeit`,
  /** A reservation-only sale (docs/fair-sale.md): users holding a reservation, and the users the draw picked. */
  seckillReserved: (vid: string) => `seckill:{${vid}}:reserved`,
  seckillWinners: (vid: string) => `seckill:{${vid}}:winners`,
  /**
   * The waitlist for returned units (docs/fair-sale.md#waitlist), in the user's home bucket tag
   * (today the voucher id): waiting users (sorted set, score = room place, else 1e12 + join sequence), their open offers
   * (sorted set, score = offer expiry ms), counters (hash: seq, offered, claimed, expired, claimsBack), and the
   * users whose offer expired while the sale ran (set: a join again queues them behind, their room
   * place spent; docs/fair-sale.md#a-room-sales-waitlist).
   */
  seckillWaitlist: (tag: string) => `seckill:{${tag}}:waitlist`,
  seckillOffers: (tag: string) => `seckill:{${tag}}:offers`,
  seckillWaitStats: (tag: string) => `seckill:{${tag}}:waitstats`,
  seckillWaitLapsed: (tag: string) => `seckill:{${tag}}:lapsed`,
  /** Where a rebuild from MySQL writes a set before renaming it over the live one (one atomic swap). */
  seckillRebuild: (vid: string, what: 'reserved' | 'winners') => `seckill:{${vid}}:${what}:rebuild`,
  /**
   * One-time grab-token nonces the grab script consumed (docs/fair-sale.md#the-grab-token), in the
   * user's home bucket tag (today the voucher id); expires an hour after the sale ends.
   */
  seckillSpent: (tag: string) => `seckill:{${tag}}:spent`,
  /**
   * The waiting room (docs/fair-sale.md#the-waiting-room), sale-wide, in bucket 0's tag `{vid}`:
   * tickets (zset user id → position), its counters (hash: seq, pre, served, at, seed), the users
   * who passed the bot gate, and one key per spent proof-of-work challenge (TTL: the challenge's).
   */
  roomQueue: (vid: string) => `seckill:{${vid}}:room:q`,
  roomState: (vid: string) => `seckill:{${vid}}:room:state`,
  roomPassed: (vid: string) => `seckill:{${vid}}:room:passed`,
  roomPowSpent: (vid: string, challenge: string) => `seckill:{${vid}}:room:pow:${challenge}`,
  /**
   * Turns for buying on admission (docs/fair-sale.md#in-turn; shapes in lua/seckill-grab-16.lua):
   * the places due, their moments, the grabs parked behind them, parked grabs' results, and the
   * buyers kept before the start; expire an hour after the sale's end. `seckillTurns` is the
   * channel a script publishes the voucher id on when it ran parked grabs.
   */
  turnDue: (vid: string) => `seckill:{${vid}}:turn:due`,
  turn: (vid: string) => `seckill:{${vid}}:turn`,
  turnParked: (vid: string) => `seckill:{${vid}}:turn:parked`,
  turnResults: (vid: string) => `seckill:{${vid}}:turn:res`,
  turnEarly: (vid: string) => `seckill:{${vid}}:turn:early`,
  seckillTurns: () => 'seckill:turns',
  /** Grab attempts per second of one user / one client address on one voucher (1 s TTL; the voucher's slot). */
  seckillRateUser: (vid: string, userId: string) => `rl:seckill:{${vid}}:u:${userId}`,
  seckillRateIp: (vid: string, ip: string) => `rl:seckill:{${vid}}:ip:${ip}`,
  /**
   * A bucketed sale's stock moves (docs/buckets.md#moving-stock): in the donor bucket, the journal of
   * moves taken out and not yet known delivered (move id → "<recipient bucket>:<units>"); in the
   * recipient, the ids of moves already delivered (so a delivery twice adds nothing). `tag` is the
   * bucket's tag (lib/seckill/buckets/tags.ts; bucket 0's is the voucher id).
   */
  seckillMovesOut: (tag: string) => `seckill:{${tag}}:moves-out`,
  seckillMovesIn: (tag: string) => `seckill:{${tag}}:moves-in`,
  /** Bumped to odd before a stock move and to even after it (a seqlock, in bucket 0's slot): a reader that sees it even and unchanged around a survey of every bucket saw no move half done. */
  seckillMoveSeq: (vid: string) => `seckill:{${vid}}:move-seq`,
  /** Short-lived claim so one worker sweeps a voucher's outbox per interval (not a correctness lock). */
  seckillSweep: (vid: string) => `seckill:{${vid}}:sweep`,
  /** Set of voucher ids whose pending outbox may be non-empty (the sweeper's index). */
  seckillActive: () => 'seckill:active',
  /** Pub/sub channel (message: a voucher id): that voucher may sell again, forget remembered refusals (lib/seckill/refusal-memory.ts). */
  seckillChanged: () => 'seckill:changed',
  /** A user's live console streams (stream id → lease expiry), for the per-user cap. */
  liveStreams: (userId: string) => `stream:live:{${userId}}`,
  orderSeq: (yyyymmdd: string) => `icr:order:{${yyyymmdd}}`,
  rateLimit: (name: string) => `rl:${name}`,
  /** 点评 (lib/blog, lib/follow, lib/feed, lib/sign, lib/uv): one key per structure, each its own slot. */
  blogLiked: (blogId: string) => `blog:liked:{${blogId}}`,
  /** Ids of notes whose tb_blog.liked the worker recounts next (only existing notes are added). */
  blogLikeDirty: () => 'blog:like-count:dirty',
  follows: (userId: string) => `follows:{${userId}}`,
  feed: (userId: string) => `feed:{${userId}}`,
  /** Short-lived claim so one worker per interval republishes notes whose fan-out never finished. */
  feedSweep: () => 'feed:sweep',
  sign: (userId: string, yyyyMM: string) => `sign:{${userId}}:${yyyyMM}`,
  shopUv: (shopId: string, yyyyMMdd: string) => `uv:shop:{${shopId}}:${yyyyMMdd}`,
  shopPv: (shopId: string, yyyyMMdd: string) => `pv:shop:{${shopId}}:${yyyyMMdd}`,
} as const;
