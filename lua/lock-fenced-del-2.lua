--[[
  Invalidates a fenced value: deletes it and raises its fence record to a token taken after the
  source of truth changed, so every writer holding an older token is refused from now on.
  KEYS[1]  the data key
  KEYS[2]  <data key>:fence
  ARGV[1]  the invalidation's fence (a fresh token from the lock's counter)
  ARGV[2]  TTL of the fence record in ms
  Returns  1
]]
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('DEL', KEYS[1])
if tonumber(ARGV[1]) > newest then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
end
return 1
