--[[
  The start of a room sale (docs/fair-sale.md#the-shuffle): the tickets issued before it get
  positions 1..pre in the order given (a seeded shuffle computed by the caller from exactly these
  tickets), once. Later tickets keep their join order after them (FIFO).

  KEYS[1]  seckill:{vid}:meta        hash: begin (ms)
  KEYS[2]  seckill:{vid}:room:q      zset user id -> position
  KEYS[3]  seckill:{vid}:room:state  hash: pre, seed (written here), at
  ARGV[1]  the seed (64 hex digits)   ARGV[2..] every pre-start ticket's user id, in the new order

  Returns  1 shuffled now; 0 already shuffled (nothing changed); -1 not started yet;
           -2 the ids are not the pre-start tickets (count differs): nothing changed
]]
local begin = tonumber(redis.call('HGET', KEYS[1], 'begin'))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not begin or now < begin then
  return -1
end
if redis.call('HEXISTS', KEYS[3], 'seed') == 1 then
  return 0
end
local pre = tonumber(redis.call('HGET', KEYS[3], 'pre')) or 0
if #ARGV - 1 ~= pre then
  return -2
end
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[2], ARGV[i]) == false then
    return -2
  end
end
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[2], 'XX', i - 1, ARGV[i])
end
redis.call('HSET', KEYS[3], 'seed', ARGV[1], 'at', now)
return 1
