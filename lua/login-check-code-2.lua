--[[
  Checks an SMS login code and burns it: single use, and dead after 5 wrong tries.
  KEYS[1]  login:code:{phone}        the code (string, TTL 5 min)
  KEYS[2]  login:code:{phone}:tries  wrong tries so far
  ARGV[1]  the code the user typed
  ARGV[2]  max wrong tries (5)
  Returns  1 ok (code deleted) | 0 wrong | -1 no code (expired, used or burned) | -2 wrong and now burned
]]
local code = redis.call('GET', KEYS[1])
if not code then
  return -1
end
if code == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
local tries = redis.call('INCR', KEYS[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
if tries >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1], KEYS[2])
  return -2
end
return 0
