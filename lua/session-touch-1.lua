--[[
  Reads a session and slides its TTL in one call: the per-request session check of every
  authenticated route (a script call costs the web process less than a MULTI/EXEC pipeline).

  KEYS[1]  login:session:{token}   hash: id, nickName, icon, role
  ARGV[1]  the session TTL in seconds

  Returns  the hash as HGETALL does (field, value, ...); empty when missing or expired
]]
local h = redis.call('HGETALL', KEYS[1])
if #h > 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return h
