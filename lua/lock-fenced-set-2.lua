--[[
  Writes a value only if the writer's fencing token is not older than the newest token that wrote
  or invalidated this key, so a holder that lost its lock (GC pause, slow rebuild) cannot
  overwrite what a newer holder or an invalidation left there.
  KEYS[1]  the data key (e.g. cache:shop:{id})
  KEYS[2]  <data key>:fence  newest token seen for it (same hash tag)
  ARGV[1]  value
  ARGV[2]  the writer's fence
  ARGV[3]  TTL of the value in ms (0 = none)
  ARGV[4]  TTL of the fence record in ms (outlives the value, so a stale writer stays refused)
  Returns  1 written | 0 refused (stale fence)
]]
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = tonumber(ARGV[2])
if fence < newest then
  return 0
end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], fence, 'PX', ARGV[4])
return 1
