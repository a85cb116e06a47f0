--[[
  Preheat / repair one voucher from the database (DESIGN §5), safe during a live sale: buyers
  only grow (union with the DB buyers passed in), the initial stock only grows (max of Redis and
  DB, so a concurrent add-stock is never undone), and the remaining stock is recomputed from them
  in the same step, so `stock + |buyers| = initial` holds after every call. Large buyer lists
  come in several calls; each one leaves Redis consistent.

  KEYS[1]  seckill:{vid}:meta    hash: initial, begin (ms), end (ms)
  KEYS[2]  seckill:{vid}:stock
  KEYS[3]  seckill:{vid}:buyers
  ARGV[1]  initial stock in the DB   ARGV[2] begin (ms)   ARGV[3] end (ms)
  ARGV[4..] user ids that have an order in the DB

  Returns  {initial, remaining, buyers}
]]
for i = 4, #ARGV, 500 do
  redis.call('SADD', KEYS[3], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
local initial = tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'initial'))
if current and current > initial then
  initial = current
end
redis.call('HSET', KEYS[1], 'initial', initial, 'begin', ARGV[2], 'end', ARGV[3])
local buyers = redis.call('SCARD', KEYS[3])
local remaining = initial - buyers
if remaining < 0 then
  remaining = 0
end
redis.call('SET', KEYS[2], remaining)
return {initial, remaining, buyers}
