--[[
  Turns a waiting user's open offer (docs/fair-sale.md#waitlist) into an order exactly as an
  accepted grab does: the user becomes a buyer and the order message goes into the outbox, in the
  same format the grab script writes, so the same publish, worker and sweeper carry it. The unit
  is already the offer's (the return or expiry script took it off the stock), so the stock is not
  touched: `stock + |buyers| + |offers| = initial` holds before and after.

  KEYS[1]  seckill:{tag}:meta       hash: begin, end (ms)
  KEYS[2]  seckill:{tag}:buyers
  KEYS[3]  seckill:{tag}:pending    the outbox: orderId -> order message JSON
  KEYS[4]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms)
  KEYS[5]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired
  KEYS[6]  seckill:{tag}:forfeit    users who gave a unit of this sale back (cancel, timeout, refund)
  ARGV[1]  voucherId   ARGV[2] userId   ARGV[3] orderId   (decimal strings, validated by the caller)

  Returns  {0, payload, at, expires}  claimed; payload is the order message, at its time (ms,
                             Redis clock), expires the offer's expiry (a claim whose order cannot be
                             published gives the offer back with it: lua/seckill-release-8.lua)
           {1}               unknown voucher (not preheated)
           {3}               the sale has ended
           {4}               already bought (an open unit, after the offer was made); the offer is
                             ended now, so the next expiry pass moves its unit on
           {7}               forfeited: this user gave a unit of this sale back (after the offer was
                             made: they grabbed an open unit meanwhile and cancelled it); the offer
                             is ended now, so the next expiry pass moves its unit on
           {13}              no open offer for this user
           {14}              the offer expired (the expiry pass moves it on)
]]
local window = redis.call('HMGET', KEYS[1], 'begin', 'end')
if not window[1] or not window[2] then
  return {1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now >= tonumber(window[2]) then
  return {3}
end
local expires = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[2]))
if not expires then
  return {13}
end
if now >= expires then
  return {14}
end
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then
  -- They bought an open unit meanwhile (one per user): the offer can never be claimed, so it ends
  -- now and the next expiry pass moves its unit on, rather than holding it until its expiry.
  redis.call('ZADD', KEYS[4], 'XX', now, ARGV[2])
  return {4}
end
if redis.call('SISMEMBER', KEYS[6], ARGV[2]) == 1 then
  -- Buy -> cancel is not free, an offer included; the unit stays the offer's until the expiry pass
  -- gives it to the next in line (stock + |buyers| + |offers| = initial all along).
  redis.call('ZADD', KEYS[4], 'XX', now, ARGV[2])
  return {7}
end
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[2])
local payload = string.format('{"v":1,"orderId":"%s","userId":"%s","voucherId":"%s","at":%.0f}', ARGV[3], ARGV[2], ARGV[1], now)
redis.call('HSET', KEYS[3], ARGV[3], payload)
redis.call('HINCRBY', KEYS[5], 'claimed', 1)
return {0, payload, now, expires}
