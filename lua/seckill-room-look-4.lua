--[[
  The waiting room (docs/fair-sale.md#the-waiting-room): one look at a room sale, optionally joining
  it, in one round trip in the voucher's slot. Moves the serving counter on by the time since its
  last move times the admission rate (after the start only, and only once the pre-start tickets
  are shuffled), then answers where this user stands.

  KEYS[1]  seckill:{vid}:meta        hash: begin, end (ms), room ('1' for a room sale), roomUntil
                                     (ms; a room that opened by itself lapses then)
  KEYS[2]  seckill:{vid}:room:q      zset user id -> position (1-based)
  KEYS[3]  seckill:{vid}:room:state  hash: seq (tickets issued), pre (of them before the start),
                                     served (positions admitted, may be fractional), at (ms of the
                                     last move), seed (set once the pre-start tickets are shuffled)
  KEYS[4]  seckill:{vid}:stock       remaining units
  ARGV[1]  user id   ARGV[2] '1' to join if not in the room   ARGV[3] most tickets
  ARGV[4]  admission rate, tickets per second (> 0)

  Returns  {0, position|false, served, issued, stock, begin, end, shuffled(0/1), now}
           {1}  unknown voucher (not preheated)     {2}  not a room sale
           {3}  ended                               {4}  the room is full
           {5}  started, the pre-start tickets not shuffled yet (the caller shuffles, asks again)
  Keys expire an hour after the sale's end (set on each join).
]]
local m = redis.call('HMGET', KEYS[1], 'begin', 'end', 'room', 'roomUntil')
if not m[1] or not m[2] then
  return {1}
end
local begin, finish = tonumber(m[1]), tonumber(m[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if m[3] ~= '1' or (m[4] and now >= tonumber(m[4])) then
  return {2}
end
if now >= finish then
  return {3}
end
local st = redis.call('HMGET', KEYS[3], 'seq', 'pre', 'served', 'at', 'seed')
local seq = tonumber(st[1]) or 0
local pre = tonumber(st[2]) or 0
local served = tonumber(st[3]) or 0
local pos = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not pos and ARGV[2] == '1' then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
    return {4}
  end
  seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
  if now < begin then
    pre = redis.call('HINCRBY', KEYS[3], 'pre', 1)
  end
  redis.call('ZADD', KEYS[2], seq, ARGV[1])
  redis.call('PEXPIREAT', KEYS[2], finish + 3600000)
  redis.call('PEXPIREAT', KEYS[3], finish + 3600000)
  pos = seq
end
local shuffled = 0
if pre == 0 or st[5] then
  shuffled = 1
end
if now >= begin then
  if shuffled == 0 then
    return {5}
  end
  local at = tonumber(st[4]) or begin
  if at < begin then
    at = begin
  end
  if now > at and served < seq then
    served = math.min(seq, served + (now - at) * tonumber(ARGV[4]) / 1000)
    redis.call('HSET', KEYS[3], 'served', tostring(served), 'at', now)
  elseif now > at then
    redis.call('HSET', KEYS[3], 'at', now)
  end
end
local stock = tonumber(redis.call('GET', KEYS[4])) or 0
if pos then
  pos = tonumber(pos)
else
  pos = false
end
return {0, pos, math.floor(served), seq, stock, begin, finish, shuffled, now}
