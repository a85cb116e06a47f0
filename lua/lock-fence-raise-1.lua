--[[
  Multi-node fencing: raises one node's counter to the fence a grant chose (never lowers it). A
  grant reads the counters of a majority, takes max + 1, and raises a majority to it before its
  section runs; any later grant's majority overlaps this one, so tokens strictly increase.
  KEYS[1]  lock:{name}:fence
  ARGV[1]  the fence chosen by the grant
  Returns  the counter after the call (which lives a day after its last raise, as single-node)
]]
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted > current then
  redis.call('SET', KEYS[1], wanted, 'PX', 86400000)
  return wanted
end
redis.call('PEXPIRE', KEYS[1], 86400000)
return current
