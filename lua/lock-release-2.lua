--[[
  Releases one hold of a lock, only if the caller still owns it: a holder whose lease ran out can
  never delete the lock the next holder took meanwhile (误删, deleting someone else's lock). The last hold
  deletes the lock and publishes on its channel, which wakes the waiters (no polling).
  KEYS[1]  lock:{name}           hash { owner, count, fence }
  KEYS[2]  lock:{name}:released  pub/sub channel (passed as a key so it carries the hash tag)
  ARGV[1]  owner token
  ARGV[2]  lease in ms (an inner release renews it, as the outer section still runs; only ever
           lengthens what is left, so an inner section's shorter lease never cuts the outer's hold)
  Returns  holds left (0 = freed and published) | -1 not the owner (expired or taken over)
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return -1
end
local left = redis.call('HINCRBY', KEYS[1], 'count', -1)
if left > 0 then
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return left
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 0
