--[[
  The grab (README: Flash sale), atomically: sale window by Redis' clock, one order per user,
  stock > 0; then take one unit, record the buyer and put the order in the voucher's outbox.

  KEYS[1]  seckill:{vid}:meta     hash: initial, begin (ms), end (ms)
  KEYS[2]  seckill:{vid}:stock    remaining units
  KEYS[3]  seckill:{vid}:buyers   set of user ids
  KEYS[4]  seckill:{vid}:pending  hash orderId -> order message JSON (accepted, not yet in MySQL)
  ARGV[1]  voucherId   ARGV[2] userId   ARGV[3] orderId   (decimal strings, validated by the caller)

  Returns  {0, payload}  accepted; payload is the order message written to the outbox
           {1}           unknown voucher (not preheated)
           {2}           not started
           {3}           ended
           {4}           already bought
           {5}           sold out
]]
local window = redis.call('HMGET', KEYS[1], 'begin', 'end')
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
-- Buyer before stock: someone who already has an order hears "already bought", not "sold out".
if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then
  return {4}
end
if (tonumber(redis.call('GET', KEYS[2])) or 0) <= 0 then
  return {5}
end
redis.call('DECR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[2])
local payload = string.format('{"v":1,"orderId":"%s","userId":"%s","voucherId":"%s","at":%.0f}', ARGV[3], ARGV[2], ARGV[1], now)
redis.call('HSET', KEYS[4], ARGV[3], payload)
return {0, payload}
