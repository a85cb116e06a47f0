--[[
  Gives back the unit of an accepted order that will never be persisted (an unconfirmed publish
  the grab voided, a discarded dead letter): removes it from the outbox and, only if it was there,
  the buyer and their unit, so running it twice changes nothing the second time. The buyer does
  not forfeit the sale (they never had an order).

  The unit goes where a returned one goes (lua/seckill-return-8.lua, docs/fair-sale.md#waitlist):
  to the head of the sale's waitlist as an offer that expires at now + ARGV[3] ms, if anyone still
  eligible waits and the sale has not ended; only otherwise back to the open stock. Else a release
  while people wait would put the unit on open sale, for whoever grabs first, past the waitlist.

  KEYS[1]  seckill:{tag}:stock
  KEYS[2]  seckill:{tag}:buyers
  KEYS[3]  seckill:{tag}:pending    the outbox: orderId -> order message JSON
  KEYS[4]  seckill:{tag}:forfeit
  KEYS[5]  seckill:{tag}:meta       hash: end (ms)
  KEYS[6]  seckill:{tag}:waitlist   sorted set userId -> place, served lowest first
  KEYS[7]  seckill:{tag}:offers     sorted set userId -> offer expiry (ms, Redis clock)
  KEYS[8]  seckill:{tag}:waitstats  hash: seq, offered, claimed, expired, claimsBack
  ARGV[1]  orderId   ARGV[2] userId   ARGV[3] how long an offer stays open (ms)
  ARGV[4]  '' or, for a claimed offer's order (lua/seckill-offer-claim-6.lua), the offer's expiry
           (ms): while the sale runs the offer goes back to its claimer, open until then but at
           least OFFER_GRACE_MS from now, so the claim they were told to retry (a 503) can succeed
           (counted in the stats' `claimsBack`: `claimed` only ever grows, it is a counter in
           /metrics); after the end the unit goes to the stock as any other

  Returns  {0}          nothing to release (not in the outbox: released before, or written)
           {1}          released, the unit back on open stock (or the buyer was already gone)
           {2, userId}  released, the unit offered to that waiting user (or back to its claimer)
]]
--#include unit-back.lua
if redis.call('HDEL', KEYS[3], ARGV[1]) == 0 then
  return {0}
end
if redis.call('SREM', KEYS[2], ARGV[2]) == 0 then
  return {1}
end
if ARGV[4] ~= '' then
  local OFFER_GRACE_MS = 5000
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local saleEnd = tonumber(redis.call('HGET', KEYS[5], 'end'))
  -- NX: were the claimer to hold an offer already (no path makes one: a buyer is never offered),
  -- this unit would be dropped; it goes the ordinary way instead.
  if saleEnd and now < saleEnd and redis.call('ZADD', KEYS[7], 'NX', math.max(tonumber(ARGV[4]), now + OFFER_GRACE_MS), ARGV[2]) == 1 then
    redis.call('HINCRBY', KEYS[8], 'claimsBack', 1)
    return {2, ARGV[2]}
  end
end
local u = unitBack(KEYS[1], KEYS[5], KEYS[6], KEYS[2], KEYS[4], KEYS[7], KEYS[8], tonumber(ARGV[3]))
if u then
  return {2, u}
end
return {1}
