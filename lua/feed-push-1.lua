--[[
  Delivers one note into one follower's inbox and keeps the inbox capped. Idempotent: a
  redelivered fan-out message writes the same member with the same score.
  KEYS[1]  feed:{userId}   ZSET member = blog id, score = publish time in ms
  ARGV[1]  blog id
  ARGV[2]  publish time in ms
  ARGV[3]  cap: keep only the newest this many entries
  ARGV[4]  TTL in seconds: an inbox nobody reads goes away
  Returns  1 when the note was new in this inbox, 0 when it was there already
]]
local added = redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local cap = tonumber(ARGV[3])
if redis.call('ZCARD', KEYS[1]) > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -cap - 1)
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return added
