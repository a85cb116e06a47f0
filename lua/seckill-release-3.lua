--[[
  Gives back the unit of an accepted order that will never be persisted (a discarded dead
  letter): removes it from the outbox and, only if it was there, the buyer and the stock unit,
  so running it twice changes nothing the second time.

  KEYS[1]  seckill:{vid}:stock
  KEYS[2]  seckill:{vid}:buyers
  KEYS[3]  seckill:{vid}:pending
  ARGV[1]  orderId   ARGV[2] userId

  Returns  1 released, 0 nothing to release
]]
if redis.call('HDEL', KEYS[3], ARGV[1]) == 0 then
  return 0
end
if redis.call('SREM', KEYS[2], ARGV[2]) == 1 then
  redis.call('INCR', KEYS[1])
end
return 1
