--[[
  Rebuilds follows:{userId} from the rows just read from tb_follow, unless another process filled
  it meanwhile (its copy is at least as fresh). The marker '0' (never a user id) keeps an empty
  list cached.
  KEYS[1]  follows:{userId}
  ARGV[1]  TTL in seconds (bounds how long a set filled from a read that raced a write can be stale)
  ARGV[2..] followed user ids
  Returns  1 when filled, 0 when it already existed
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('SADD', KEYS[1], '0', unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
