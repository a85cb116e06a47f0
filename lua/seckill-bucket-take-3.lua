--[[
  First half of a stock move between two buckets of one flash sale (docs/buckets.md#moving-stock),
  in the donor bucket: takes up to `want` unsold units out of it and journals the move, in one
  atomic step, so `stock + |buyers| = initial` still holds in the bucket (its initial shrinks with
  its stock) and the units are never nowhere: until the journal entry is cleared they are counted
  as in flight. The second half is lua/seckill-bucket-give-3.lua in the recipient.

  KEYS[1]  seckill:{tag}:meta       the donor bucket's meta (initial)
  KEYS[2]  seckill:{tag}:stock      the donor bucket's unsold units
  KEYS[3]  seckill:{tag}:moves-out  journal: move id -> "<recipient bucket>:<units>"
  ARGV[1]  move id (unique)   ARGV[2] units wanted (> 0)   ARGV[3] recipient bucket index

  Returns  units taken (0: nothing to give, or the donor is not preheated)
]]
local stock = tonumber(redis.call('GET', KEYS[2]))
if not stock or stock <= 0 or redis.call('HEXISTS', KEYS[1], 'initial') == 0 then
  return 0
end
local k = math.min(stock, tonumber(ARGV[2]))
if k <= 0 then
  return 0
end
redis.call('DECRBY', KEYS[2], k)
redis.call('HINCRBY', KEYS[1], 'initial', -k)
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3] .. ':' .. k)
return k
