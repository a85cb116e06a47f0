--[[
  Takes (or re-enters) a single-Redis lock. The lock is a hash, as in Redisson: who owns it, how
  many times the owner's call chain holds it, and the fencing token of this grant.
  KEYS[1]  lock:{name}        hash { owner, count, fence }, TTL = lease
  KEYS[2]  lock:{name}:fence  counter of grants. It expires a day after the last grant, so
                              names that are locked once (a cache miss on a random id) do not
                              pile up; a new counter starts at Redis' clock in ms, far above
                              anything the old one reached, so tokens still only ever grow
  ARGV[1]  owner token (random per grant, reused by the same async call chain)
  ARGV[2]  lease in ms (a re-entry only ever lengthens the lease left: an inner section asking
           for a shorter one must not cut the outer section's hold short)
  ARGV[3]  'new' = take a free lock | 'reenter' = only count up a lock this owner already holds
  Returns  fence (> 0) when granted or re-entered
           | -ms (<= 0) busy: how long the current lease has left (0 when re-entry found it lost)
]]
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return tonumber(redis.call('HGET', KEYS[1], 'fence'))
end
if ARGV[3] == 'reenter' then
  return 0
end
if not owner then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', KEYS[2], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  end
  local fence = redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], 86400000)
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'count', 1, 'fence', fence)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return fence
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  -- A lock without expiry should not exist; make waiters look again after one lease, not spin.
  ttl = tonumber(ARGV[2])
end
return -ttl
