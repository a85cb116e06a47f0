--[[
  Mirrors one user's like state on a note into blog:liked:{blogId}, the ZSET the note page reads
  (member = user id, score = like time in ms, so ZRANGE gives likers in the order they liked).
  The caller decided the state inside its MySQL transaction while holding the note's row lock, so
  concurrent toggles reach Redis in the same order as their commits.
  KEYS[1]  blog:liked:{blogId}
  ARGV[1]  user id
  ARGV[2]  '1' = liked | '0' = not liked
  ARGV[3]  like time in ms (used when liking)
  Returns  the ZSET's size afterwards
]]
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZCARD', KEYS[1])
