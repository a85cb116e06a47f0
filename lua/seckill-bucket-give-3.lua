--[[
  Second half of a stock move (docs/buckets.md#moving-stock), in the recipient bucket: adds the
  units a donor took out (lua/seckill-bucket-take-3.lua), once per move id, so the mover and a
  recovery pass both delivering it add it once. The donor's journal entry is cleared after this.

  KEYS[1]  seckill:{tag}:meta       the recipient bucket's meta (initial)
  KEYS[2]  seckill:{tag}:stock
  KEYS[3]  seckill:{tag}:moves-in   set of move ids already delivered here
  ARGV[1]  move id   ARGV[2] units

  Returns  1 delivered now, 0 delivered before, -1 the recipient is not preheated (a lost bucket:
           the move stays in flight until a repair has rebuilt it; nothing is written)
]]
if redis.call('HEXISTS', KEYS[1], 'initial') == 0 then
  return -1
end
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return 0
end
local k = tonumber(ARGV[2])
redis.call('HINCRBY', KEYS[1], 'initial', k)
redis.call('INCRBY', KEYS[2], k)
return 1
