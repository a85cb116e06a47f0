--[[
  Watchdog renewal: pushes the lease out again, only while the caller still owns the lock. A lock
  that already expired is not brought back (someone else may have seen it free).
  KEYS[1]  lock:{name}  hash { owner, count, fence }
  ARGV[1]  owner token
  ARGV[2]  lease in ms
  Returns  1 renewed | 0 lost
]]
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
