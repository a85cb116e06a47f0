--[[
  The bot gate for one user and sale (lua/seckill-gate-pass-2.lua's header says how), as a function
  the scripts that pass it share (that script, and the room's look when it carries a solution).

  passGate(passed, spent, user, ttl, untilMs)
    passed  seckill:{vid}:room:passed   spent  seckill:{vid}:room:pow:<challenge>
    user    the user id
    ttl     ms the spent mark lives; 0 (or not a number): no solution that checked out
    untilMs when the passed set may go (epoch ms)
  Returns 1 passed before, 2 passed now, 0 not passed
]]
local function passGate(passed, spent, user, ttl, untilMs)
  if redis.call('SISMEMBER', passed, user) == 1 then
    return 1
  end
  ttl = tonumber(ttl)
  if not ttl or ttl <= 0 then
    return 0
  end
  if not redis.call('SET', spent, '1', 'PX', ttl, 'NX') then
    return 0
  end
  redis.call('SADD', passed, user)
  redis.call('PEXPIREAT', passed, untilMs)
  return 2
end
