--[[
  Takes a single-Redis lock if it is free and hands out the next fencing token.
  KEYS[1]  lock:{name}        the lock (string holding the owner token, TTL = lease)
  KEYS[2]  lock:{name}:fence  per-lock counter of grants (never expires, so tokens only grow)
  ARGV[1]  owner token (random, unique per grant)
  ARGV[2]  lease in ms
  Returns  fence (> 0) when granted | -pttl (<= 0) when held by someone else (the ms it has left)
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return -math.max(redis.call('PTTL', KEYS[1]), 0)
