--[[
  Moves a preheated flash sale's total stock by a signed amount, atomically with the grab script:
  the admin lowering a voucher's stock (never below what remains unsold), or undoing that when
  the matching MySQL write failed. Keeps "stock + |buyers| = initial" true.
  KEYS[1]  seckill:{vid}:meta   hash: initial, begin, end
  KEYS[2]  seckill:{vid}:stock  remaining stock
  ARGV[1]  amount: > 0 adds, < 0 takes away
  Returns  the new remaining stock (>= 0) | -1 not enough unsold stock to take away | -2 not preheated
]]
local amount = tonumber(ARGV[1])
local stock = tonumber(redis.call('GET', KEYS[2]))
if not stock or redis.call('HEXISTS', KEYS[1], 'initial') == 0 then
  return -2
end
if stock + amount < 0 then
  return -1
end
redis.call('HINCRBY', KEYS[1], 'initial', amount)
return redis.call('INCRBY', KEYS[2], amount)
