--[[
  Keeps a buyer's turn (docs/fair-sale.md#in-turn): this place's holder asked to buy and will, once
  through the gate or admitted, so the grabs in turn of the places behind it wait for theirs a
  moment (lua/seckill-grab-16.lua parks them). One moment per place and sale: a running moment is
  never extended, and a place that had its turn is never kept again.

  KEYS[1] seckill:{vid}:meta  KEYS[2] seckill:{vid}:turn:due  KEYS[3] seckill:{vid}:turn
  KEYS[4] seckill:{vid}:turn:early   (their shapes: lua/seckill-grab-16.lua)
  ARGV[1] the place ('' before the start: kept by user until the room has shuffled)
  ARGV[2] the user id   ARGV[3] '1' admitted (the moment starts now), '0' waiting
  ARGV[4] ROOM_TURN_MS  ARGV[5] at most this many places (or early users) due per sale

  Returns 1 kept, 0 not (unknown sale, had its turn, a running moment, or full)
]]
local endMs = tonumber(redis.call('HGET', KEYS[1], 'end'))
if not endMs then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[5])
local FORGET_MS = 60000

if ARGV[1] == '' then
  -- Full: first let go of those who stopped looking a minute ago (their score: when to forget them).
  if redis.call('ZCARD', KEYS[4]) >= max then
    redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  end
  if redis.call('ZCARD', KEYS[4]) >= max and not redis.call('ZSCORE', KEYS[4], ARGV[2]) then
    return 0
  end
  redis.call('ZADD', KEYS[4], now + FORGET_MS, ARGV[2])
  redis.call('PEXPIREAT', KEYS[4], endMs + 3600000)
  return 1
end

local place = ARGV[1]
local v = redis.call('HGET', KEYS[3], place)
if v then
  -- Had its turn (0), or its moment runs or ran (> 0): as it is.
  if tonumber(v) >= 0 then
    return 0
  end
elseif redis.call('ZCARD', KEYS[2]) >= max then
  return 0
end
-- Admitted, or a place the moments already started past: its moment starts now. Else it waits,
-- forgotten a minute after this look unless it looks again.
local ms = tonumber(redis.call('HGET', KEYS[3], 'ms')) or 0
if ARGV[3] == '1' or tonumber(place) <= ms then
  redis.call('HSET', KEYS[3], place, now + tonumber(ARGV[4]))
else
  redis.call('HSET', KEYS[3], place, -(now + FORGET_MS))
end
redis.call('ZADD', KEYS[2], place, place)
redis.call('PEXPIREAT', KEYS[2], endMs + 3600000)
redis.call('PEXPIREAT', KEYS[3], endMs + 3600000)
return 1
