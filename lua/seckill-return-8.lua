--[[
  Gives a cancelled or refunded seckill order's unit back to the sale in Redis, once per order:
  the order id goes into the voucher's returned set first, so a retry (the worker or the backstop
  after a crash between the MySQL commit and this call) changes nothing the second time. The
  unit comes back only if the buyer really left the buyers set, so
  `stock + |buyers| + |offers| = initial` holds whatever Redis lost meanwhile. The buyer forfeits
  the sale: grab, cancel, grab again would let one account hold a unit for free, again and again,
  so the grab script refuses anyone in the forfeit set (rebuilt by preheat from the cancelled and
  refunded orders in MySQL).

  Where the unit goes (docs/fair-sale.md#waitlist): to the head of the sale's waitlist as an
  offer that expires at now + ARGV[3] ms, if anyone still eligible waits and the sale has not
  ended; only otherwise back to the open stock. Never both, in the same atomic step. Waiters who
  meanwhile bought, forfeited or already hold an offer are dropped from the head on the way.

  KEYS[1]  seckill:{tag}:stock
  KEYS[2]  seckill:{tag}:buyers
  KEYS[3]  seckill:{tag}:returned   set of order ids already given back
  KEYS[4]  seckill:{tag}:forfeit    set of user ids who gave a unit back
  KEYS[5]  seckill:{tag}:meta       hash: end (ms), back (units given back to the open stock: the
                                     waiting room's hold cap counts them, lua/seckill-room-look-10.lua)
  KEYS[6]  seckill:{tag}:waitlist   sorted set userId -> place (room place, or a late offset + join sequence; docs/fair-sale.md#a-room-sales-waitlist), served lowest first
  KEYS[7]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms, Redis clock)
  KEYS[8]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired
  ARGV[1]  orderId   ARGV[2] userId   ARGV[3] how long an offer stays open (ms)

  Returns  {0}          already returned before
           {1}          returned now, to the open stock (or the buyer was already gone)
           {2, userId}  returned now, offered to that waiting user
           {3}          the sale is not in Redis (its keys expired after the end, or Redis lost
                        it): nothing to give back here, and no key is made that would never expire;
                        the preheat that brings the sale back counts the unit from MySQL
  The returned and forfeit sets take the meta's expiry when it has one (an ended sale's grace).
]]
--#include unit-back.lua
if redis.call('EXISTS', KEYS[5]) == 0 then
  return {3}
end
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return {0}
end
redis.call('SADD', KEYS[4], ARGV[2])
-- An ended sale's keys already expire (the sweeper gave them the grace period): the two sets made
-- or grown here expire with them, else a timeout after that moment would keep them forever.
local ttl = redis.call('PTTL', KEYS[5])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[3], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
if redis.call('SREM', KEYS[2], ARGV[2]) == 0 then
  return {1}
end
local u = unitBack(KEYS[1], KEYS[5], KEYS[6], KEYS[2], KEYS[4], KEYS[7], KEYS[8], tonumber(ARGV[3]))
if u then
  return {2, u}
end
-- The buyer left the buyers set but is not a holder again (they forfeited): the room's cap counts
-- their unit as won still, else their ticket would hold the unit they gave back for a whole hold.
redis.call('HINCRBY', KEYS[5], 'back', 1)
return {1}
