--[[
  The next fence of a single-Redis lock taken outside a grant (an invalidation after a write,
  lib/lock/index.ts invalidateFenced), exactly as a grant takes it (lua/lock-acquire-2.lua): a
  counter that expired starts again at Redis' clock in ms, above every token the old one handed
  out, so fences only ever grow. (A plain INCR would start it at 1: below the records earlier
  grants and invalidations left, every later store refused until they expire, a day.)
  KEYS[1]  lock:{name}:fence  counter of grants; lives a day after its last use
  ARGV     none
  Returns  the fence
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
local fence = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 86400000)
return fence
