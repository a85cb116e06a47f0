--[[
  Joins a sold-out sale's waitlist (docs/fair-sale.md#waitlist): once per user (a second call
  answers the same place), only while the sale runs and has no open stock, only for a user who
  could grab it (admitted by the gate if the sale has one, not a buyer, not a forfeiter), and only
  while the list is shorter than ARGV[2]. The place is a sequence number, so the waitlist is served
  in joining order.

  A room sale (docs/fair-sale.md#a-room-sales-waitlist) keeps its room's order and its bot gate
  here too, or the waitlist would be a way round both: only a user who passed the gate (KEYS[11])
  may join, and the list is served in room-place order (KEYS[10]: the place is the score) with
  whoever never took a ticket behind every ticket holder, in joining order among themselves (the
  score LATE + sequence, in every sale). A waiting user's position can therefore grow when someone
  with an earlier room place joins after them. An offer is the place's turn: whoever let one expire
  (KEYS[12]) joins again as a latecomer, or two early places that never claim would pass every
  returned unit between them, joining again after each lapse, and nobody behind would get one.
  An offer past its expiry that the expiry pass (lua/seckill-offer-expire-8.lua) has not closed
  yet answers {19}: the caller runs the pass, which moves the unit on and notes the lapse, and
  joins again. No entry ever sits beside an offer the pass has still to close.

  KEYS[1]  seckill:{tag}:meta       hash: begin, end (ms), gate (docs/fair-sale.md#the-gate-in-the-grab),
                                    room ('1': a room sale), roomUntil (ms: a room that opened by itself lapses then)
  KEYS[2]  seckill:{tag}:stock
  KEYS[3]  seckill:{tag}:buyers
  KEYS[4]  seckill:{tag}:forfeit
  KEYS[5]  seckill:{tag}:reserved
  KEYS[6]  seckill:{tag}:winners
  KEYS[7]  seckill:{tag}:waitlist   sorted set userId -> room place, or LATE + join sequence
  KEYS[8]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms)
  KEYS[9]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired
  KEYS[10] seckill:{vid}:room:q     zset user id -> room place (read only)
  KEYS[11] seckill:{vid}:room:passed  users who passed the sale's bot gate (read only)
  KEYS[12] seckill:{tag}:lapsed     users whose offer expired (read only)
  ARGV[1]  userId   ARGV[2] most users the waitlist holds

  Returns  {0, position, length}  waiting (position 1 = next to be offered a unit)
           {1}                    unknown voucher (not preheated)
           {2}                    not started   {3} ended   {4} already bought   {7} forfeited
           {8}                    the sale's gate does not admit this user
           {15, expiresAt}        this user already holds an open offer
           {19, expiresAt}        this user's offer is past its expiry, not yet closed by the pass
           {16}                   not sold out: grab instead
           {17}                   the waitlist is full
           {18}                   a room sale, and this user has not passed its bot gate
]]
-- Behind every room place (places are at most the room's ticket cap, far below this), exact in a double.
local LATE = 1e12
local window = redis.call('HMGET', KEYS[1], 'begin', 'end', 'gate', 'room', 'roomUntil')
if not window[1] or not window[2] then
  return {1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < tonumber(window[1]) then
  return {2}
end
if now >= tonumber(window[2]) then
  return {3}
end
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then
  return {4}
end
-- Same boundary as the claim (it refuses at now >= expiry) and the pass (it closes score <= now).
local offer = redis.call('ZSCORE', KEYS[8], ARGV[1])
if offer then
  return {tonumber(offer) <= now and 19 or 15, offer}
end
local rank = redis.call('ZRANK', KEYS[7], ARGV[1])
if rank then
  return {0, rank + 1, redis.call('ZCARD', KEYS[7])}
end
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then
  return {7}
end
local gate = window[3]
if (gate == 'r' and redis.call('SISMEMBER', KEYS[5], ARGV[1]) == 0)
  or (gate == 'w' and redis.call('SISMEMBER', KEYS[6], ARGV[1]) == 0)
  or gate == 'd' then
  return {8}
end
if (tonumber(redis.call('GET', KEYS[2])) or 0) > 0 then
  return {16}
end
local length = redis.call('ZCARD', KEYS[7])
if length >= tonumber(ARGV[2]) then
  return {17}
end
if window[4] == '1' and (not window[5] or now < tonumber(window[5]))
  and redis.call('SISMEMBER', KEYS[11], ARGV[1]) == 0 then
  return {18}
end
-- A room place, kept even after a room that opened by itself lapsed, unless an offer made for it
-- expired; without one, behind them all.
local place = redis.call('SISMEMBER', KEYS[12], ARGV[1]) == 0 and redis.call('ZSCORE', KEYS[10], ARGV[1])
local score = place and tonumber(place) or LATE + redis.call('HINCRBY', KEYS[9], 'seq', 1)
redis.call('ZADD', KEYS[7], score, ARGV[1])
return {0, redis.call('ZRANK', KEYS[7], ARGV[1]) + 1, length + 1}
