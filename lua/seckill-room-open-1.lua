--[[
  Opens the waiting room of an ordinary flash sale by itself (docs/fair-sale.md#opening-by-itself),
  because the web processes are shedding its grabs: from now on its grabs need a grab token, until
  `roomUntil`. Each call pushes that end further; nobody calling lets it lapse. A merchant's room
  (room = '1' without roomUntil) is left as it is.

  KEYS[1]  seckill:{vid}:meta   hash: end (ms), room, roomUntil
  ARGV[1]  how long the room stays open after this call, ms

  Returns  1 opened or extended; 0 not a known sale, ended, or the merchant's own room
]]
local m = redis.call('HMGET', KEYS[1], 'end', 'room', 'roomUntil')
if not m[1] then
  return 0
end
if m[2] == '1' and not m[3] then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now >= tonumber(m[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'room', '1', 'roomUntil', now + tonumber(ARGV[1]))
return 1
