--[[
  Where a unit given back goes (docs/fair-sale.md#waitlist), as a function the scripts that give
  one back share (lua/seckill-return-8.lua, lua/seckill-release-8.lua): to the head of the sale's
  waitlist while the sale runs, else to the open stock. Waiters are taken off the head until one
  is still eligible (not a buyer, not a forfeiter, holding no open offer), who gets an offer open
  until now (Redis' clock) + offerMs. The ineligible ones taken off on the way are dropped: none of
  them can ever be offered a unit of this sale. Never both offered and stocked: one atomic step.

  unitBack(stock, meta, waitlist, buyers, forfeit, offers, waitstats, offerMs)
    stock      seckill:{tag}:stock      raised by one when nobody is offered the unit
    meta       seckill:{tag}:meta       hash: end (ms); after the end nobody is offered a unit
    waitlist   seckill:{tag}:waitlist   sorted set userId -> place, served lowest first
    buyers     seckill:{tag}:buyers     forfeit  seckill:{tag}:forfeit
    offers     seckill:{tag}:offers     sorted set userId -> offer expiry (ms)
    waitstats  seckill:{tag}:waitstats  hash: offered is counted here
  Returns the user offered the unit, or nil when it went to the open stock.
]]
local function unitBack(stock, meta, waitlist, buyers, forfeit, offers, waitstats, offerMs)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local saleEnd = tonumber(redis.call('HGET', meta, 'end'))
  while saleEnd and now < saleEnd do
    local head = redis.call('ZPOPMIN', waitlist)
    if #head == 0 then
      break
    end
    local u = head[1]
    if redis.call('SISMEMBER', buyers, u) == 0 and redis.call('SISMEMBER', forfeit, u) == 0 and not redis.call('ZSCORE', offers, u) then
      redis.call('ZADD', offers, now + offerMs, u)
      redis.call('HINCRBY', waitstats, 'offered', 1)
      return u
    end
  end
  redis.call('INCR', stock)
  return nil
end
