--[[
  Joins a sold-out sale's waitlist (docs/fair-sale.md#waitlist): once per user (a second call
  answers the same place), only while the sale runs and has no open stock, only for a user who
  could grab it (admitted by the gate if the sale has one, not a buyer, not a forfeiter), and only
  while the list is shorter than ARGV[2]. The place is a sequence number, so the waitlist is served
  in joining order.

  KEYS[1]  seckill:{tag}:meta       hash: begin, end (ms), gate (docs/fair-sale.md#the-gate-in-the-grab)
  KEYS[2]  seckill:{tag}:stock
  KEYS[3]  seckill:{tag}:buyers
  KEYS[4]  seckill:{tag}:forfeit
  KEYS[5]  seckill:{tag}:reserved
  KEYS[6]  seckill:{tag}:winners
  KEYS[7]  seckill:{tag}:waitlist   sorted set userId -> join sequence
  KEYS[8]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms)
  KEYS[9]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired
  ARGV[1]  userId   ARGV[2] most users the waitlist holds

  Returns  {0, position, length}  waiting (position 1 = next to be offered a unit)
           {1}                    unknown voucher (not preheated)
           {2}                    not started   {3} ended   {4} already bought   {7} forfeited
           {8}                    the sale's gate does not admit this user
           {15, expiresAt}        this user already holds an open offer
           {16}                   not sold out: grab instead
           {17}                   the waitlist is full
]]
local window = redis.call('HMGET', KEYS[1], 'begin', 'end', 'gate')
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
local offer = redis.call('ZSCORE', KEYS[8], ARGV[1])
if offer then
  return {15, offer}
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
redis.call('ZADD', KEYS[7], redis.call('HINCRBY', KEYS[9], 'seq', 1), ARGV[1])
return {0, length + 1, length + 1}
