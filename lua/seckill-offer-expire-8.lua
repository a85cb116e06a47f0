--[[
  The periodic pass over a sale's open offers (docs/fair-sale.md#waitlist): every offer past its
  expiry (Redis clock) is closed and its unit moves on — to the next eligible waiter as a new
  offer, or, when nobody waits or the sale has ended, back to the open stock. One atomic step, so
  several workers running it at once, or a claim racing it, never move one unit twice: an offer is
  either claimed (the claim script removes it while it is still open) or expired here, never both.

  An offer is the waitlist's hold: a user who let theirs run out while the sale runs is noted in
  KEYS[8], and joining again queues them behind everyone, their room place spent
  (docs/fair-sale.md#a-room-sales-waitlist). Not after the end: nobody joins then, and the set
  would be made after the sale's keys were given their expiry.

  KEYS[1]  seckill:{tag}:stock
  KEYS[2]  seckill:{tag}:buyers
  KEYS[3]  seckill:{tag}:forfeit
  KEYS[4]  seckill:{tag}:meta       hash: end (ms), back (units given back to the open stock,
                                    lua/seckill-return-8.lua; only before the end: a meta that
                                    expired is not made again here)
  KEYS[5]  seckill:{tag}:waitlist   sorted set userId -> place (room place, or a late offset + join sequence; docs/fair-sale.md#a-room-sales-waitlist), served lowest first
  KEYS[6]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms)
  KEYS[7]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired
  KEYS[8]  seckill:{tag}:lapsed     set of users whose offer expired while the sale ran
  ARGV[1]  how long a new offer stays open (ms)   ARGV[2] most offers to close in this call

  Returns  {expired, offered, toStock}
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
if #due == 0 then
  return {0, 0, 0}
end
local saleEnd = tonumber(redis.call('HGET', KEYS[4], 'end'))
local open = saleEnd and now < saleEnd
local offered, toStock = 0, 0
for _, expiredUser in ipairs(due) do
  redis.call('ZREM', KEYS[6], expiredUser)
  redis.call('HINCRBY', KEYS[7], 'expired', 1)
  if open then
    redis.call('SADD', KEYS[8], expiredUser)
  end
  local given = false
  -- The holder of the offer closed here has no entry: the join closes a lapsed offer (this pass,
  -- run by its caller) before it lets its holder join again (lua/seckill-waitlist-join-12.lua).
  -- Were one there all the same, it is kept but not offered this unit: a user joining again in
  -- each gap, alone on the list, could otherwise hold one unit off sale for good.
  local own = nil
  while open and not given do
    local head = redis.call('ZPOPMIN', KEYS[5])
    if #head == 0 then
      break
    end
    local u = head[1]
    if u == expiredUser then
      own = head
    elseif redis.call('SISMEMBER', KEYS[2], u) == 0 and redis.call('SISMEMBER', KEYS[3], u) == 0 and not redis.call('ZSCORE', KEYS[6], u) then
      redis.call('ZADD', KEYS[6], now + tonumber(ARGV[1]), u)
      redis.call('HINCRBY', KEYS[7], 'offered', 1)
      given = true
    end
  end
  if own then
    redis.call('ZADD', KEYS[5], own[2], own[1])
  end
  if given then
    offered = offered + 1
  else
    redis.call('INCR', KEYS[1])
    if open then
      redis.call('HINCRBY', KEYS[4], 'back', 1)
    end
    toStock = toStock + 1
  end
end
return {#due, offered, toStock}
