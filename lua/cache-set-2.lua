--[[
  Fenced cache write: stores a rebuilt cache entry unless that would put older data over newer.
  Two ways a rebuild can be late: the entry was invalidated (a DB write) after the rebuild read
  the DB, or a newer rebuild (higher lock fence) already wrote. Both are refused here, atomically.
  KEYS[1]  the cache key: "" = "not in DB" marker, else {"f":<fence>,"e":<expiresAt ms>,"d":<data>}
  KEYS[2]  its generation counter, bumped by every invalidation (lib/cache invalidate)
  ARGV[1]  the generation read before loading from the DB ("0" when the counter was absent)
  ARGV[2]  the rebuild's fence (strictly increasing per lock name, from lib/lock)
  ARGV[3]  the value to store
  ARGV[4]  TTL in ms
  Returns  1 written | 0 invalidated while loading, not written | -1 a newer fence wrote, not written
]]
local gen = redis.call('GET', KEYS[2]) or '0'
if gen ~= ARGV[1] then
  return 0
end
local current = redis.call('GET', KEYS[1])
if current then
  local fence = string.match(current, '^{"f":(%d+)')
  if fence and tonumber(fence) > tonumber(ARGV[2]) then
    return -1
  end
end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
return 1
