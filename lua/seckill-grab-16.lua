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
  KEYS[11] seckill:{vid}:turn:due    Turns (docs/fair-sale.md#in-turn), used only with ARGV[7]: the places
                                     due (sorted set, score = place): holders who asked to buy and have not
  KEYS[12] seckill:{vid}:turn        had their turn; a hash: place -> moment (ms > 0: the places behind wait
                                     for it until then; < 0: -(when it is forgotten), waiting, its moment not
                                     started; 0: had its turn, never kept again), 'ms' (every waiting place up
                                     to it has had its moment started), 'g<place>' (a parked grab's
                                     '<userId> <orderId> <nonce>')
  KEYS[13] seckill:{vid}:turn:parked grabs waiting for a place ahead (sorted set place -> place)
  KEYS[14] seckill:{vid}:turn:res    results of parked grabs run by another call (hash orderId -> result:
                                     by the grab's own order id, so a result nobody read never answers
                                     another grab of the same user)
  KEYS[15] seckill:{vid}:turn:early  buyers kept before the start, by user (sorted set -> forget at ms)
  KEYS[16] seckill:{vid}:room:q      the room's tickets (user -> place), read for the early buyers
  ARGV[1]  voucherId   ARGV[2] userId   ARGV[3] orderId   (decimal strings, validated by the caller)
  ARGV[4]  attempts per user per second (0 = no limit)   ARGV[5] attempts per IP per second (0 = no limit)
  ARGV[6]  the grab token's '<epoch>.<nonce>' ('' when the grab carries none); the caller verified
           the token's signature, user, sale and expiry without Redis: only whether it was minted by
           this copy of the sale (the epoch) and its one-time use are decided here. Epoch '*': the
           caller is the room buying on admission, minting and spending in this one call (a signed
           token never carries it: lib/seckill/room/tokens.ts)
  ARGV[7]  '' a plain grab; 'g' a grab in turn (buying on admission) of place ARGV[8]: it goes now if no
           place ahead is due, else it is parked and run, in place order, by whichever call finds the
           way clear (lib/seckill/room/turns.ts); 'f' no grab: run the parked grabs whose way is clear
           (ARGV[8], if set, leaves its turn first); 'c' no grab: take back the parked grab of place
           ARGV[8] and order id ARGV[3] if it has not run
  ARGV[9]  ROOM_TURN_MS   ARGV[10] the channel to publish the voucher id on when parked grabs ran

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
           {14, place, ms}   'g': parked behind this due place, whose moment ends in ms at the latest;
                             the result will be in KEYS[14] (the channel says when)
           {15, place|false, ms|false}   'f': the first place still in the way of a parked grab
           {16}          'c': taken back, nothing bought   {17, result}  'c': it ran (the encoded result)
           {18}          'c': neither parked nor run (Redis lost it)
  A parked grab's result is its reply's fields joined by newlines.
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

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local mode = ARGV[7]

-- The grab itself, for this user, order id and token nonce.
local function grab(user, orderId, nonce)
  local window = redis.call('HMGET', KEYS[1], 'begin', 'end', 'gate', 'room', 'roomUntil', 'epoch')
  if not window[1] or not window[2] then
    return {1}
  end
  if now < tonumber(window[1]) then
    return {2, window[1]}
  end
  if now >= tonumber(window[2]) then
    return {3}
  end
  -- Buyer before stock: someone who already has an order hears "already bought", not "sold out".
  if redis.call('SISMEMBER', KEYS[3], user) == 1 then
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
      if redis.call('SISMEMBER', KEYS[8], user) == 0 then
        return {8}
      end
    elseif gate == 'w' then
      if redis.call('SISMEMBER', KEYS[9], user) == 0 then
        if redis.call('SISMEMBER', KEYS[8], user) == 1 then
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
  if redis.call('SISMEMBER', KEYS[7], user) == 1 then
    return {7}
  end
  -- The room's token, read with the window (an ordinary sale pays nothing more). Last, so only a
  -- grab that takes a unit spends a nonce and the spent set holds at most one per unit sold: a
  -- forfeited user (refused for good) minting a token a second used to add one each time, for the
  -- sale's whole life. A token refused before this point may try again; every such refusal is final
  -- for the user or the sale, or passes (the rate limit) within a second.
  if window[4] == '1' and (not window[5] or now < tonumber(window[5])) then
    if nonce == '' then
      return {11, window[5] or false}
    end
    -- '*': a token minted and spent by one call (buying on admission), never handed to anyone: no
    -- copy of the sale older than this one can have minted it, and nobody holds it to replay.
    local epoch = string.match(nonce, '^[^.]*')
    if epoch ~= '*' then
      -- A token from before a Redis loss: the spent set and the buyers set that would refuse its
      -- replay are gone with the epoch (the buyers rebuilt from MySQL lack orders still queued).
      if epoch ~= (window[6] or '') then
        return {13}
      end
      if redis.call('SADD', KEYS[10], nonce) == 0 then
        return {12}
      end
      redis.call('PEXPIREAT', KEYS[10], tonumber(window[2]) + 3600000)
    end
  end
  redis.call('DECR', KEYS[2])
  redis.call('SADD', KEYS[3], user)
  local payload = string.format('{"v":1,"orderId":"%s","userId":"%s","voucherId":"%s","at":%.0f}', orderId, user, ARGV[1], now)
  redis.call('HSET', KEYS[4], orderId, payload)
  return {0, payload, now}
end

-- This user's and address's attempts this second, counted once per call that grabs ('' or 'g').
local function limited()
  local userWait = over(KEYS[5], tonumber(ARGV[4]))
  local ipWait = over(KEYS[6], tonumber(ARGV[5]))
  if userWait then
    return {6, userWait, 'user'}
  end
  if ipWait then
    return {6, ipWait, 'ip'}
  end
  return nil
end

if mode == '' then
  return limited() or grab(ARGV[2], ARGV[3], ARGV[6])
end

-- Turns (docs/fair-sale.md#in-turn), shared by every web process: a grab in turn runs only when no
-- place ahead of it is due; otherwise it is parked here and run by the call that clears its way, so
-- the grabs of all processes take their units, and their orders are stamped, in place order.
local DUE, TURN, PARKED, RES, EARLY = KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15]
local turnMs = tonumber(ARGV[9]) or 0
local FORGET_MS = 60000

-- Buyers kept before the start have final places once the room has shuffled (it has: a grab in
-- turn is an admitted one's): each becomes a due place, waiting.
local function placeEarly()
  local users = redis.call('ZRANGEBYSCORE', EARLY, now, '+inf')
  redis.call('DEL', EARLY)
  local ms = tonumber(redis.call('HGET', TURN, 'ms')) or 0
  for _, u in ipairs(users) do
    local p = redis.call('ZSCORE', KEYS[16], u)
    if p and not redis.call('HGET', TURN, p) then
      redis.call('ZADD', DUE, p, p)
      -- A place the moments already started past starts its own now.
      redis.call('HSET', TURN, p, tonumber(p) <= ms and now + turnMs or -(now + FORGET_MS))
    end
  end
end

-- A grab of place `limit` is about to be weighed: every place ahead is admitted (the counter admits
-- in place order), so each one still waiting starts its moment now, all side by side.
local function startUpTo(limit)
  local ms = tonumber(redis.call('HGET', TURN, 'ms')) or 0
  if limit - 1 <= ms then
    return
  end
  for _, p in ipairs(redis.call('ZRANGEBYSCORE', DUE, '(' .. ms, '(' .. limit)) do
    local v = tonumber(redis.call('HGET', TURN, p)) or 0
    if v < 0 and -v > now then
      redis.call('HSET', TURN, p, now + turnMs)
    end
  end
  redis.call('HSET', TURN, 'ms', limit - 1)
end

-- The first due place ahead of `limit` whose moment runs, and its end; forgets those past theirs.
local function blocker(limit)
  while true do
    local h = redis.call('ZRANGE', DUE, 0, 0, 'WITHSCORES')
    if #h == 0 or tonumber(h[2]) >= limit then
      return nil
    end
    local v = tonumber(redis.call('HGET', TURN, h[1])) or 0
    if v > now then
      return {tonumber(h[1]), v}
    end
    redis.call('ZREM', DUE, h[1])
    if v > 0 then
      -- Its moment ended: had its turn.
      redis.call('HSET', TURN, h[1], 0)
    else
      -- Waiting and not looked for in a minute (or unreadable): forgotten.
      redis.call('HDEL', TURN, h[1])
    end
  end
end

local function encode(r)
  local parts = {}
  for i = 1, #r do
    parts[i] = r[i] == false and '' or tostring(r[i])
  end
  return table.concat(parts, '\n')
end

-- Runs the parked grabs, in place order, while nothing due is ahead of the first; `own`'s result (an
-- order id) is returned, the others' are stored for their callers, by order id, and announced.
-- Returns also what blocks.
local function drain(own)
  local mine, blocked, ran = nil, nil, false
  while true do
    local top = redis.call('ZRANGE', PARKED, 0, 0, 'WITHSCORES')
    if #top == 0 then
      break
    end
    local place = tonumber(top[2])
    startUpTo(place)
    blocked = blocker(place)
    if blocked then
      break
    end
    redis.call('ZREM', PARKED, top[1])
    local a = redis.call('HGET', TURN, 'g' .. top[1])
    redis.call('HDEL', TURN, 'g' .. top[1])
    local user, orderId, nonce = string.match(a or '', '^(%S+) (%S+) ?(%S*)$')
    if user then
      local r = grab(user, orderId, nonce)
      if orderId == own then
        mine = r
      else
        redis.call('HSET', RES, orderId, encode(r))
        ran = true
      end
    end
  end
  if ran then
    redis.call('PEXPIRE', RES, 3600000)
    redis.call('PUBLISH', ARGV[10], ARGV[1])
  end
  return mine, blocked
end

local place = ARGV[8]
-- The order id of a parked grab's record ('<userId> <orderId> <nonce>').
local function recordId(a)
  return string.match(a or '', '^%S+ (%S+)')
end
if mode == 'c' then
  -- Only this grab's own record: another request of the same user may hold the place now.
  if recordId(redis.call('HGET', TURN, 'g' .. place)) == ARGV[3] and redis.call('ZREM', PARKED, place) == 1 then
    redis.call('HDEL', TURN, 'g' .. place)
    drain(nil)
    return {16}
  end
  local r = redis.call('HGET', RES, ARGV[3])
  if r then
    redis.call('HDEL', RES, ARGV[3])
    return {17, r}
  end
  return {18}
end

if mode == 'g' then
  local refused = limited()
  if refused then
    return refused
  end
end
-- A sale Redis does not know has no line to keep (nor an end to give its keys a life): a grab
-- says so, a leave writes nothing.
local endMs = tonumber(redis.call('HGET', KEYS[1], 'end'))
if not endMs and mode == 'g' then
  return grab(ARGV[2], ARGV[3], ARGV[6])
end
if endMs then
  -- The buyer is here (or leaves): no longer due, and never kept again.
  if place ~= '' then
    redis.call('ZREM', DUE, place)
    redis.call('HSET', TURN, place, 0)
  end
  if redis.call('EXISTS', EARLY) == 1 then
    placeEarly()
  end
end
local replaced = false
if mode == 'g' then
  -- Another request of this user parked at this place before (a retry, another tab or process):
  -- its grab will never run; its caller hears "taken back" (nothing bought) at once.
  local before = recordId(redis.call('HGET', TURN, 'g' .. place))
  if before and before ~= ARGV[3] then
    redis.call('HSET', RES, before, '16')
    redis.call('PEXPIRE', RES, 3600000)
    replaced = true
  end
  redis.call('ZADD', PARKED, place, place)
  redis.call('HSET', TURN, 'g' .. place, ARGV[2] .. ' ' .. ARGV[3] .. ' ' .. ARGV[6])
  redis.call('PEXPIREAT', PARKED, endMs + 3600000)
end
-- Every write above lives until an hour after the sale's end, whichever call made the key.
if endMs then
  if redis.call('EXISTS', TURN) == 1 then
    redis.call('PEXPIREAT', TURN, endMs + 3600000)
  end
  if redis.call('EXISTS', DUE) == 1 then
    redis.call('PEXPIREAT', DUE, endMs + 3600000)
  end
end
if replaced then
  redis.call('PUBLISH', ARGV[10], ARGV[1])
end
local mine, blocked = drain(mode == 'g' and ARGV[3] or nil)
if mine then
  return mine
end
if mode == 'g' then
  return {14, blocked[1], blocked[2] - now}
end
if blocked then
  return {15, blocked[1], blocked[2] - now}
end
return {15, false, false}
