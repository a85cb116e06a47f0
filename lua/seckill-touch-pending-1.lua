--[[
  The outbox sweeper records a republish on a pending entry, but only while the entry is still
  there: the worker may have persisted the order and removed it in the meantime, and a plain
  HSET would bring it back.

  KEYS[1]  seckill:{vid}:pending
  ARGV[1]  orderId   ARGV[2] the updated entry JSON

  Returns  1 updated, 0 the entry is gone
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
