--[[
  Preheat / repair one voucher from the database (docs/flash-sale.md#preheat-and-repair), safe during a live sale: buyers
  only grow (union with the DB buyers passed in: a buyer accepted in Redis but not yet written
  stays a buyer), the initial stock and window are the database's, and the remaining stock is
  recomputed from them in the same atomic step, so `stock + |buyers| + |offers| = initial` holds
  after every call and no unit is sold twice (a unit offered to a waiting user, docs/fair-sale.md#waitlist,
  is neither stock nor bought until the offer is claimed or expires). Large buyer lists come in several calls; each one leaves Redis
  consistent. (Callers that change the stock in MySQL serialize with preheats under one voucher
  lock; a preheat racing such a change without it can only under-sell until the next preheat.)

  KEYS[1]  seckill:{vid}:meta    hash: initial, begin (ms), end (ms), gate (docs/fair-sale.md#the-gate-in-the-grab),
                                 room (docs/fair-sale.md#the-grab-token)
  KEYS[2]  seckill:{vid}:stock
  KEYS[3]  seckill:{vid}:buyers
  KEYS[4]  seckill:{vid}:offers  sorted set of users holding an offer of a returned unit
  ARGV[1]  initial stock in the DB   ARGV[2] begin (ms)   ARGV[3] end (ms)
  ARGV[4]  the sale's gate: '' (anyone may grab), 'r', 'd' or 'w'; written with the window, so a
           gated sale's meta never exists without its gate (its sets are rebuilt before this call)
  ARGV[5]  '1' when the sale is behind the waiting room (its grabs need a token), else ''; written
           with the window for the same reason as the gate. A room that opened by itself (roomUntil,
           lua/seckill-room-open-3.lua) is left to lapse
  ARGV[6..] user ids that have an order in the DB

  Returns  {initial, remaining, buyers}
]]
for i = 6, #ARGV, 500 do
  redis.call('SADD', KEYS[3], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
local initial = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'initial', initial, 'begin', ARGV[2], 'end', ARGV[3])
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[1], 'gate')
else
  redis.call('HSET', KEYS[1], 'gate', ARGV[4])
end
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[1], 'room', '1')
  redis.call('HDEL', KEYS[1], 'roomUntil')
elseif not redis.call('HGET', KEYS[1], 'roomUntil') then
  redis.call('HDEL', KEYS[1], 'room')
end
local buyers = redis.call('SCARD', KEYS[3])
local remaining = initial - buyers - redis.call('ZCARD', KEYS[4])
if remaining < 0 then
  remaining = 0
end
redis.call('SET', KEYS[2], remaining)
return {initial, remaining, buyers}
