--[[
  Releases a lock only if the caller still owns it, so a holder whose lease ran out can never
  delete the lock the next holder took meanwhile (the seeds' 误删 problem).
  KEYS[1]  lock:{name}
  ARGV[1]  the caller's owner token
  Returns  1 released | 0 not the owner (expired, or someone else holds it)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
