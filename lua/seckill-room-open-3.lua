--[[
  Opens the waiting room of an ordinary flash sale by itself (docs/fair-sale.md#opening-by-itself),
  because the web processes are shedding its grabs: from now on its grabs need a grab token, until
  `roomUntil`. Each call pushes that end further; nobody calling lets it lapse. A merchant's room
  (room = '1' without roomUntil) is left as it is.

  KEYS[1]  seckill:{vid}:meta         hash: end (ms), room, roomUntil, back (units buyers gave back
                                      to the open stock)
  KEYS[2]  seckill:{vid}:room:state   hash: w0 (buyers + back when the room first admitted), wl (the
                                      units the room's admitted had won at the counter's last move)
  KEYS[3]  seckill:{vid}:buyers
  ARGV[1]  how long the room stays open after this call, ms

  Opening a room that had lapsed again: while it was lapsed anyone could buy, and those purchases
  are not the room's; counted as the room's wins (won = |buyers| + back - w0) they would let the
  counter admit more holders than there are units (docs/fair-sale.md#an-admitted-ticket-holds-a-unit).
  So w0 is moved on by every buyer and every unit given back since the counter last counted: won
  starts again from wl. The room's own admitted who bought during the lapse are then counted as
  still holding — the cap errs towards admitting later, never towards a hold without a unit —
  until their holds run out.

  Returns  1 opened or extended; 0 not a known sale, ended, or the merchant's own room
]]
local m = redis.call('HMGET', KEYS[1], 'end', 'room', 'roomUntil', 'back')
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
if m[3] and now >= tonumber(m[3]) then
  local st = redis.call('HMGET', KEYS[2], 'w0', 'wl')
  if st[1] then
    redis.call('HSET', KEYS[2], 'w0', redis.call('SCARD', KEYS[3]) + (tonumber(m[4]) or 0) - (tonumber(st[2]) or 0))
  end
end
redis.call('HSET', KEYS[1], 'room', '1', 'roomUntil', now + tonumber(ARGV[1]))
return 1
