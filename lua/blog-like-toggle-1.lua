--[[
  Toggles one user's like on a note in blog:liked:{blogId}, the ZSET that decides the toggle
  (member = user id, score = like time in ms, so ZRANGE gives likers in the order they liked).
  The note's MySQL row is never locked for a like: this script is the one place two clicks meet.
  A filled ZSET always holds the marker member '' at +inf, so "nobody likes it" stays cached and a
  ZSET that vanished (Redis lost it, the note was deleted) is told apart from an empty one: then
  the caller reads tb_blog_like and calls again with its rows.
  KEYS[1]  blog:liked:{blogId}
  ARGV[1]  user id
  ARGV[2]  now in ms (the like time when this click likes)
  ARGV[3]  '1' = ARGV[4..] are every like of the note from MySQL (score, user id pairs), to fill
           the ZSET with when it is missing; '0' = none given
  Returns  {1|0 liked afterwards, number of likes afterwards}, or {-1, 0} when the ZSET is missing
           and no rows were given
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[3] ~= '1' then return {-1, 0} end
  redis.call('ZADD', KEYS[1], '+inf', '')
  for i = 4, #ARGV, 2 do
    redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1])
  end
end
local state
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  state = 0
else
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  state = 1
end
return {state, redis.call('ZCOUNT', KEYS[1], '-inf', '(+inf')}
