--[[
  The waiting room (docs/fair-sale.md#the-waiting-room): one look at a room sale, optionally joining
  it, in one round trip in the voucher's slot. Moves the serving counter on by the time since its
  last move times the admission rate (after the start only, and only once the pre-start tickets
  are shuffled), then answers where this user stands.

  KEYS[1]  seckill:{vid}:meta        hash: begin, end (ms), room ('1' for a room sale), roomUntil
                                     (ms; a room that opened by itself lapses then), back (units
                                     buyers gave back to the open stock, lua/seckill-return-8.lua)
  KEYS[2]  seckill:{vid}:room:q      zset user id -> position (1-based)
  KEYS[3]  seckill:{vid}:room:state  hash: seq (tickets issued), pre (of them before the start),
                                     served (positions admitted, may be fractional), at (ms of the
                                     last move), seed (set once the pre-start tickets are shuffled),
                                     w0, wl, pw (the hold cap's count of units won, below)
  KEYS[4]  seckill:{vid}:stock       remaining units
  KEYS[5]  seckill:{vid}:buyers      users who bought (SCARD: the units won)
  KEYS[6]  seckill:{vid}:turn:due    KEYS[7] seckill:{vid}:turn   KEYS[8] seckill:{vid}:turn:early
                                     the turns (lua/seckill-turn-keep-4.lua), used with ARGV[6]
  KEYS[9]  seckill:{vid}:room:passed the users through the bot gate (lua/seckill-gate-pass-2.lua)
  KEYS[10] seckill:{vid}:room:pow:<challenge>  the spent mark of ARGV[9]'s solution ('-' if none)
  ARGV[1]  user id   ARGV[2] '1' to join if not in the room (not after the start with no stock
           left: sold out, no ticket for nothing)   ARGV[3] most tickets
  ARGV[4]  admission rate, tickets per second (> 0)
  ARGV[5]  hold, ms (0: no cap): an admitted ticket holds a unit this long, so the counter admits
           no more tickets than there are units for (docs/fair-sale.md#an-admitted-ticket-holds-a-unit):
             served <= stock + max(won + pw, served as it was at least `hold` ago)
           won = SCARD(buyers) + back - w0 (w0: the same sum when the room first admitted). A
           buyer who gave their unit back to the open stock (cancel, payment timeout, refund, or an
           offer of it that expired with nobody waiting: meta's back) left the buyers set but still
           counts as won: they forfeited and hold nothing, and the unit raises the cap at once, as
           stock, for the next ticket (counted out, their ticket held the unit they gave back until
           its hold lapsed). A unit given back as a waitlist offer counts out until claimed (it is
           not on open sale); its claim then counts in for the buyer who gave it back, so the
           claimant is not in won: pw counts the tickets that had bought already when the counter
           reached them (a waitlist claim before their place came). Every admitted
           ticket that has not won yet is either still within its hold (then it has a unit: the
           admitted-not-won are at most the stock) or lapsed (admitted before the checkpoint: its
           unit may go to the next ticket). Checkpoints of served every hold/4, a ring of 8 fields
           in the state hash (h0..h7 = 'ms:served', hi = the next slot, hat = when the last was taken).
           The counter's last move (hl = 'ms:served') joins the ring when the counter moves again
           after standing still a quarter hold or more: a counter that caught up with every ticket
           stops moving, and its last move, within a quarter hold of the checkpoint before it, would
           otherwise never be recorded (the holders it admitted held their units again for the next
           arrivals, a whole hold after theirs had lapsed).
  ARGV[6]  '1': the visitor asks to buy on admission (docs/fair-sale.md#buying-on-admission): with
           a ticket and a unit left, keep their turn (admitted: its moment starts now; waiting: as
           waiting, by user until the pre-start tickets are shuffled), and say whether they are
           through the gate. '' : neither (a plain look)
  ARGV[7]  ROOM_TURN_MS (0: no turn is kept here: the sale's grabs are not in turn)
  ARGV[8]  at most this many places (or early users) due per sale
  ARGV[9]  the gate's solution, checked by the caller: ms its spent mark lives, '0' one that did not
           check out, '' none sent. With a unit left it is spent here, as lua/seckill-gate-pass-2.lua
           would (the passed set lives until an hour after the sale's end)
  ARGV[10] the reserve, per cent of the stock left, and ARGV[11] its least (both 0 or '': no limit):
           after the start, with a hold, a join that finds every unit spoken for gets no ticket
           (docs/fair-sale.md#every-unit-spoken-for): the live tickets (waiting, or admitted and
           neither bought nor past their hold: seq - max(won + pw, served a hold ago), the
           hold cap's own terms) at the stock left plus the reserve. Pre-start joins are never
           refused (the shuffle must not reward arriving first)
  The look, the gate and the turn are one round trip: a buyer's request used to make three.

  Returns  {0, position|false, served, issued, stock, begin, end, shuffled(0/1), now, held(0/1),
            gate, passed, kept, full(0/1)}
           held: with a hold, every open unit is held by an admitted ticket that has not bought
           (the next ticket waits for a purchase to end the sale or a hold to lapse)
           gate: -1 no solution spent here; else lua/seckill-gate-pass-2.lua's answer (1 passed
           before, 2 passed now, 0 not passed)
           passed: with ARGV[6], 1 through the gate (now or before), 0 not; -1 not asked
           kept: 1 the turn was kept here (or had been: one moment per place), 0 not asked or not
           kept (no ticket, no unit left, no turns)
           full: 1 this join was refused a ticket, every unit spoken for (ARGV[10], ARGV[11])
           {1}  unknown voucher (not preheated)     {2}  not a room sale
           {3}  ended                               {4}  the room is full
           {5}  started, the pre-start tickets not shuffled yet (the caller shuffles, asks again)
  Keys expire an hour after the sale's end (set on each join).
]]
--#include turn-keep.lua
--#include gate-pass.lua
local m = redis.call('HMGET', KEYS[1], 'begin', 'end', 'room', 'roomUntil', 'back')
if not m[1] or not m[2] then
  return {1}
end
local begin, finish = tonumber(m[1]), tonumber(m[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if m[3] ~= '1' or (m[4] and now >= tonumber(m[4])) then
  return {2}
end
if now >= finish then
  return {3}
end
local st = redis.call('HMGET', KEYS[3], 'seq', 'pre', 'served', 'at', 'seed')
local seq = tonumber(st[1]) or 0
local pre = tonumber(st[2]) or 0
local served = tonumber(st[3]) or 0
local pos = redis.call('ZSCORE', KEYS[2], ARGV[1])
local stock = tonumber(redis.call('GET', KEYS[4])) or 0
-- places of one move of the counter looked up in the buyers set (pw, below)
local PW_CHECK = 64

-- A checkpoint ('ms:served', a ring slot or hl): its time and the served count then; nil for none.
local function checkpoint(c)
  local sep = c and string.find(c, ':', 1, true)
  if sep then
    return tonumber(string.sub(c, 1, sep - 1)), tonumber(string.sub(c, sep + 1))
  end
end

-- served as it was at least `hold` ago, from the ring of checkpoints (0 if none is that old)
local function servedAgo(hold)
  local ring = redis.call('HMGET', KEYS[3], 'h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7')
  local old, oldAt = 0, -1
  for i = 1, 8 do
    local t, v = checkpoint(ring[i])
    if t and t <= now - hold and t > oldAt then
      oldAt, old = t, v
    end
  end
  return old
end

-- Every unit spoken for: the live tickets against the stock left plus the reserve (ARGV[10], ARGV[11]),
-- after the start, with a hold. Read only once the tickets issued could reach it at all.
local full = 0
local reservePct, reserveMin, holdMs = tonumber(ARGV[10]) or 0, tonumber(ARGV[11]) or 0, tonumber(ARGV[5]) or 0
if not pos and ARGV[2] == '1' and now >= begin and stock > 0 and holdMs > 0 and (reservePct > 0 or reserveMin > 0) then
  local limit = stock + math.max(reserveMin, math.ceil(stock * reservePct / 100))
  if seq >= limit then
    local w = redis.call('HMGET', KEYS[3], 'w0', 'pw', 'hl')
    local won = 0
    if w[1] then
      won = redis.call('SCARD', KEYS[5]) + (tonumber(m[5]) or 0) - tonumber(w[1])
    end
    -- Spent: the tickets admitted a hold ago or more. The ring has them, and so has the counter's
    -- last move (hl) once it is a hold old: a counter that caught up with every ticket stops moving
    -- and records no checkpoint, and a refused join does not raise seq to move it again, so without
    -- it the room would stay full over holds long lapsed.
    local spent = servedAgo(holdMs)
    local lastAt, lastServed = checkpoint(w[3])
    if lastAt and lastAt <= now - holdMs then
      spent = math.max(spent, lastServed)
    end
    if seq - math.max(won + (tonumber(w[2]) or 0), spent) >= limit then
      full = 1
    end
  end
end
-- No ticket for nothing: after the start with no unit left (a returned unit goes to the waitlist
-- first and keeps the sale sold out here), a join is answered sold out without a place.
if not pos and ARGV[2] == '1' and full == 0 and (now < begin or stock > 0) then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
    return {4}
  end
  seq = redis.call('HINCRBY', KEYS[3], 'seq', 1)
  if now < begin then
    pre = redis.call('HINCRBY', KEYS[3], 'pre', 1)
  end
  redis.call('ZADD', KEYS[2], seq, ARGV[1])
  redis.call('PEXPIREAT', KEYS[2], finish + 3600000)
  redis.call('PEXPIREAT', KEYS[3], finish + 3600000)
  pos = seq
end
local shuffled = 0
if pre == 0 or st[5] then
  shuffled = 1
end
local held = 0
if now >= begin then
  if shuffled == 0 then
    return {5}
  end
  local hold = tonumber(ARGV[5]) or 0
  local capped = hold > 0 and served < seq
  -- With a hold: the units won since the room first admitted, and the checkpoint ring's cursor.
  local won, hi, hat, pw = 0, 0, -1, 0
  if capped then
    local w = redis.call('HMGET', KEYS[3], 'w0', 'hi', 'hat', 'hl', 'pw')
    local bought = redis.call('SCARD', KEYS[5]) + (tonumber(m[5]) or 0)
    local w0 = tonumber(w[1])
    if not w0 then
      w0 = bought
      redis.call('HSET', KEYS[3], 'w0', w0)
    end
    won, hi, hat, pw = bought - w0, tonumber(w[2]) or 0, tonumber(w[3]) or -1, tonumber(w[5]) or 0
    local lastMove = checkpoint(w[4])
    if lastMove and lastMove > hat and now - lastMove >= hold / 4 then
      redis.call('HSET', KEYS[3], 'h' .. hi, w[4], 'hi', (hi + 1) % 8, 'hat', lastMove)
      hi, hat = (hi + 1) % 8, lastMove
    end
  end
  local at = tonumber(st[4]) or begin
  if at < begin then
    at = begin
  end
  if now > at and served < seq then
    local nextServed = math.min(seq, served + (now - at) * tonumber(ARGV[4]) / 1000)
    -- The cap; the lapsed holds (the ring) are read only when the units won do not cover it.
    if capped and nextServed > stock + math.max(0, won + pw) then
      nextServed = math.max(served, math.min(nextServed, stock + math.max(won + pw, servedAgo(hold))))
    end
    -- pw: tickets that had bought already when the counter reached them (through the waitlist, or
    -- while a room that opened by itself had lapsed). They hold nothing, and no other term counts
    -- them as won. At most PW_CHECK of a move's new places are looked at: one not looked at counts
    -- as holding, the cap only errs later.
    if capped and math.floor(nextServed) > math.floor(served) then
      local reached = redis.call('ZRANGEBYSCORE', KEYS[2], math.floor(served) + 1, math.floor(nextServed), 'LIMIT', 0, PW_CHECK)
      local already = 0
      for _, u in ipairs(reached) do
        already = already + redis.call('SISMEMBER', KEYS[5], u)
      end
      if already > 0 then
        pw = pw + already
        redis.call('HSET', KEYS[3], 'pw', pw)
      end
    end
    if capped and now - hat >= hold / 4 then
      redis.call('HSET', KEYS[3], 'h' .. hi, now .. ':' .. nextServed, 'hi', (hi + 1) % 8, 'hat', now)
    end
    local moved = nextServed > served
    served = nextServed
    if capped then
      -- wl: the room's wins as the counter last counted them (a room that lapses and opens again
      -- counts its wins on from there, lua/seckill-room-open-3.lua); hl only when it moved (the
      -- moment it reached this value)
      if moved then
        redis.call('HSET', KEYS[3], 'served', tostring(served), 'at', now, 'wl', won, 'hl', now .. ':' .. served)
      else
        redis.call('HSET', KEYS[3], 'served', tostring(served), 'at', now, 'wl', won)
      end
    else
      redis.call('HSET', KEYS[3], 'served', tostring(served), 'at', now)
    end
  elseif now > at then
    redis.call('HSET', KEYS[3], 'at', now)
    if seq == 0 then
      -- A look before anyone joined made the state key: it expires with the room (a join sets it too).
      redis.call('PEXPIREAT', KEYS[3], finish + 3600000)
    end
  end
  if capped and math.floor(served) < seq and math.floor(served) - won - pw >= stock then
    held = 1
  end
end
if pos then
  pos = tonumber(pos)
else
  pos = false
end
-- The gate and the turn, for a ticket holder while a unit is left (sold out, the answer is 已抢光).
local gate, passed, kept = -1, -1, 0
if stock > 0 then
  if ARGV[9] ~= '' then
    gate = passGate(KEYS[9], KEYS[10], ARGV[1], ARGV[9], finish + 3600000)
  end
  -- A solution that did not pass (gate 0) ends the request (POW_FAILED): nothing kept for it.
  if ARGV[6] == '1' and gate ~= 0 then
    if gate > 0 or (gate == -1 and redis.call('SISMEMBER', KEYS[9], ARGV[1]) == 1) then
      passed = 1
    else
      passed = 0
    end
    local turnMs = tonumber(ARGV[7]) or 0
    if pos and turnMs > 0 then
      if now >= begin and pos <= math.floor(served) then
        keepTurn(KEYS[6], KEYS[7], KEYS[8], tostring(pos), ARGV[1], '1', turnMs, tonumber(ARGV[8]), finish, now)
      elseif shuffled == 1 then
        keepTurn(KEYS[6], KEYS[7], KEYS[8], tostring(pos), ARGV[1], '0', turnMs, tonumber(ARGV[8]), finish, now)
      else
        keepTurn(KEYS[6], KEYS[7], KEYS[8], '', ARGV[1], '0', turnMs, tonumber(ARGV[8]), finish, now)
      end
      kept = 1
    end
  end
end
return {0, pos, math.floor(served), seq, stock, begin, finish, shuffled, now, held, gate, passed, kept, full}
