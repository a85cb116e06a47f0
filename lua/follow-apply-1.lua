--[[
  Applies a follow or unfollow to follows:{userId} while the caller's transaction holds the
  follower's row lock (so one user's writes reach the set in commit order), but only when the set
  is cached: a missing set is rebuilt whole from tb_follow on the next read, and adding one member
  to it here would make a partial set look complete.
  KEYS[1]  follows:{userId}  SET of followed user ids (plus the marker '0', so "follows nobody" is cached too)
  ARGV[1]  followed user id
  ARGV[2]  '1' = follow | '0' = unfollow
  Returns  1 when the cached set was updated, 0 when there was none
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[1], ARGV[1])
else
  redis.call('SREM', KEYS[1], ARGV[1])
end
return 1
