--[[
  Refills blog:liked:{blogId} from tb_blog_like when Redis lost it, unless a toggle filled it first
  (a fill never overwrites a live ZSET). Adds the marker member '' at +inf (see blog-like-toggle).
  KEYS[1]  blog:liked:{blogId}
  ARGV[1..] every like of the note from MySQL: score (like time in ms), user id pairs
  Returns  1 when it filled, 0 when the ZSET was already there
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('ZADD', KEYS[1], '+inf', '')
for i = 1, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1])
end
return 1
