--[[
  Issues the next global order id parts (docs/security.md#redis-keys): Redis' own clock and the daily sequence,
  read together so ids come out in the order the sequence is incremented, whatever the clocks of
  the web instances say. A count > 1 leases a block of sequence numbers at once (lib/id/pool.ts).

  KEYS[1]  icr:order:{yyyyMMdd}  the daily counter for the UTC day the caller assumed
  ARGV[1]  that day as a day number (floor(unix seconds / 86400))
  ARGV[2]  how many sequence numbers to take (optional, default 1)

  Returns  {seconds, sequence}  Redis' unix seconds and the new (last taken) sequence value
           {-1, day}            Redis' clock is on another day: retry with that day's key
]]
local t = redis.call('TIME')
local seconds = tonumber(t[1])
local day = math.floor(seconds / 86400)
if day ~= tonumber(ARGV[1]) then
  return {-1, day}
end
return {seconds, redis.call('INCRBY', KEYS[1], tonumber(ARGV[2]) or 1)}
