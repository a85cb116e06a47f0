--[[
  The grab (docs/flash-sale.md#where-a-grab-goes) in one round trip, atomically: the per-user and per-IP limits of
  this voucher, the sale window by Redis' clock, one order per user, stock > 0, admitted by the
  sale's gate if it has one (docs/fair-sale.md#the-gate-in-the-grab), carrying an unspent grab
  token's nonce if the sale is behind the waiting room (docs/fair-sale.md#the-grab-token), not a
  unit this user already gave back; then take one unit, record the buyer and put the order in the
  voucher's outbox. Every key is in the voucher's
  hash slot (the limit keys carry its tag), so the script runs on one Redis Cluster node.

  KEYS[1]  seckill:{vid}:meta     hash: initial, begin (ms), end (ms), gate (absent: anyone may grab;
                                  'r' reserved users only; 'd' draw not run yet; 'w' drawn users only),
                                  room ('1': behind the waiting room, a grab needs a token's nonce),
                                  roomUntil (ms; present when the room opened by itself: it lapses then),
                                  epoch (room sales: set by the first grab token of this copy of the
                                  sale, lib/seckill/room/grab-token.ts; a Redis that lost the sale
                                  has lost it too, and mints another)
  KEYS[2]  seckill:{vid}:stock    remaining units
  KEYS[3]  seckill:{vid}:buyers   set of user ids
  KEYS[4]  seckill:{vid}:pending  hash orderId -> order message JSON (accepted, not yet in MySQL)
  KEYS[5]  rl:seckill:{vid}:u:<userId>   grab attempts of this user this second (1 s TTL)
  KEYS[6]  rl:seckill:{vid}:ip:<ip>      grab attempts from this address this second (1 s TTL)
  KEYS[7]  seckill:{vid}:forfeit  set of user ids whose unit was cancelled, timed out or refunded
  KEYS[8]  seckill:{vid}:reserved set of user ids holding a reservation (gated sales only)
  KEYS[9]  seckill:{vid}:winners  set of user ids the draw picked (draw sales only)
  KEYS[10] seckill:{vid}:spent    set of grab-token nonces already used (room sales only; expires
                                  an hour after the sale's end)
  ARGV[1]  voucherId   ARGV[2] userId   ARGV[3] orderId   (decimal strings, validated by the caller)
  ARGV[4]  attempts per user per second (0 = no limit)   ARGV[5] attempts per IP per second (0 = no limit)
  ARGV[6]  the grab token's '<epoch>.<nonce>' ('' when the grab carries none); the caller verified
           the token's signature, user, sale and expiry without Redis: only whether it was minted by
           this copy of the sale (the epoch) and its one-time use are decided here

  Returns  {0, payload, at}  accepted; payload is the order message written to the outbox, at its
                             acceptance time (ms, Redis clock), so the caller need not parse it
           {1}           unknown voucher (not preheated)
           {2, begin}    not started; begin (ms) lets a caller remember it no longer than that
           {3}           ended
           {4}           already bought
           {5}           sold out
           {6, ms, who}  rate limited ('user' or 'ip'); retry after ms
           {7}           forfeited: this user gave a unit of this sale back and may not grab again
           {8}           not reserved: a gated sale, and this user holds no reservation
           {9}           the draw has not run yet (the caller runs it and asks again)
           {10}          not drawn: reserved, but the draw did not pick this user
           {11, until}   no token: a room sale, and the grab carries no nonce; until is the end (ms) of a
                         room that opened by itself, false for the merchant's (it never lapses)
           {12}          token used: this nonce was spent by an earlier grab
           {13}          stale token: minted before Redis lost the sale (its epoch is not the meta's), so
                         its spent nonce and its buyer may be forgotten: back through the room
]]
local function over(key, limit)
  if limit <= 0 then
    return nil
  end
  local n = redis.call('INCR', key)
  if n == 1 then
    redis.call('PEXPIRE', key, 1000)
  end
  if n > limit then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      redis.call('PEXPIRE', key, 1000)
      ttl = 1000
    end
    return ttl
  end
  return nil
end

local userWait = over(KEYS[5], tonumber(ARGV[4]))
local ipWait = over(KEYS[6], tonumber(ARGV[5]))
if userWait then
  return {6, userWait, 'user'}
end
if ipWait then
  return {6, ipWait, 'ip'}
end

local window = redis.call('HMGET', KEYS[1], 'begin', 'end', 'gate', 'room', 'roomUntil', 'epoch')
if not window[1] or not window[2] then
  return {1}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now < tonumber(window[1]) then
  return {2, window[1]}
end
if now >= tonumber(window[2]) then
  return {3}
end
-- Buyer before stock: someone who already has an order hears "already bought", not "sold out".
if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then
  return {4}
end
if (tonumber(redis.call('GET', KEYS[2])) or 0) <= 0 then
  return {5}
end
-- The gate is a field read with the window: an ungated sale pays nothing more. After the stock
-- check, so a sold-out gated sale refuses everyone alike (and that refusal can be remembered).
local gate = window[3]
if gate then
  if gate == 'r' then
    if redis.call('SISMEMBER', KEYS[8], ARGV[2]) == 0 then
      return {8}
    end
  elseif gate == 'w' then
    if redis.call('SISMEMBER', KEYS[9], ARGV[2]) == 0 then
      if redis.call('SISMEMBER', KEYS[8], ARGV[2]) == 1 then
        return {10}
      end
      return {8}
    end
  else
    return {9}
  end
end
-- After the stock check: only a grab that could take a unit pays for this lookup (a sold-out
-- storm does not), and a forfeited user hears "sold out" like everyone else once it is.
if redis.call('SISMEMBER', KEYS[7], ARGV[2]) == 1 then
  return {7}
end
-- The room's token, read with the window (an ordinary sale pays nothing more). Last, so only a
-- grab that takes a unit spends a nonce and the spent set holds at most one per unit sold: a
-- forfeited user (refused for good) minting a token a second used to add one each time, for the
-- sale's whole life. A token refused before this point may try again; every such refusal is final
-- for the user or the sale, or passes (the rate limit) within a second.
if window[4] == '1' and (not window[5] or now < tonumber(window[5])) then
  if ARGV[6] == '' then
    return {11, window[5] or false}
  end
  -- A token from before a Redis loss: the spent set and the buyers set that would refuse its
  -- replay are gone with the epoch (the buyers rebuilt from MySQL lack orders still queued).
  if string.match(ARGV[6], '^[^.]*') ~= (window[6] or '') then
    return {13}
  end
  if redis.call('SADD', KEYS[10], ARGV[6]) == 0 then
    return {12}
  end
  redis.call('PEXPIREAT', KEYS[10], tonumber(window[2]) + 3600000)
end
redis.call('DECR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[2])
local payload = string.format('{"v":1,"orderId":"%s","userId":"%s","voucherId":"%s","at":%.0f}', ARGV[3], ARGV[2], ARGV[1], now)
redis.call('HSET', KEYS[4], ARGV[3], payload)
return {0, payload, now}
