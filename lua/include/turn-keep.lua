--[[
  Keeping a buyer's turn (lua/seckill-turn-keep-4.lua's header says how turns work), as a function
  the scripts that keep one share (that script, and the room's look when it is asked to buy).

  keepTurn(due, turn, early, place, user, admitted, turnMs, max, endMs, now)
    due, turn, early  the keys seckill:{vid}:turn:due, seckill:{vid}:turn, seckill:{vid}:turn:early
    place   the place ('' before the start: kept by user until the room has shuffled)
    user    the user id   admitted  '1' the moment starts now, '0' waiting
    turnMs  ROOM_TURN_MS  max  at most this many places (or early users) due per sale
    endMs   the sale's end (ms)   now  Redis's clock (ms)
  Returns 1 kept, 0 not (had its turn, a running moment, or full)
]]
local function keepTurn(due, turn, early, place, user, admitted, turnMs, max, endMs, now)
  local FORGET_MS = 60000
  if place == '' then
    -- Full: first let go of those who stopped looking a minute ago (their score: when to forget them).
    if redis.call('ZCARD', early) >= max then
      redis.call('ZREMRANGEBYSCORE', early, '-inf', now)
    end
    if redis.call('ZCARD', early) >= max and not redis.call('ZSCORE', early, user) then
      return 0
    end
    redis.call('ZADD', early, now + FORGET_MS, user)
    redis.call('PEXPIREAT', early, endMs + 3600000)
    return 1
  end
  local v = redis.call('HGET', turn, place)
  if v then
    -- Had its turn (0), or its moment runs or ran (> 0): as it is.
    if tonumber(v) >= 0 then
      return 0
    end
  elseif redis.call('ZCARD', due) >= max then
    return 0
  end
  -- Admitted, or a place the moments already started past: its moment starts now. Else it waits,
  -- forgotten a minute after this look unless it looks again.
  local ms = tonumber(redis.call('HGET', turn, 'ms')) or 0
  if admitted == '1' or tonumber(place) <= ms then
    redis.call('HSET', turn, place, now + turnMs)
  else
    redis.call('HSET', turn, place, -(now + FORGET_MS))
  end
  redis.call('ZADD', due, place, place)
  redis.call('PEXPIREAT', due, endMs + 3600000)
  redis.call('PEXPIREAT', turn, endMs + 3600000)
  return 1
end
