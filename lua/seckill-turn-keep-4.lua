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
--#include turn-keep.lua
local endMs = tonumber(redis.call('HGET', KEYS[1], 'end'))
if not endMs then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return keepTurn(KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), endMs, now)
