--[[
  The bot gate for one user and sale in one round trip (docs/fair-sale.md#the-bot-gate): passed
  before, or passed now by spending a solution the caller has already checked (its number solves
  its challenge, the challenge is ours, for this user and sale, not expired: lib/seckill/room/pow.ts).
  A solution counts once: its challenge is remembered until the challenge's expiry.

  KEYS[1] seckill:{vid}:room:passed        the users through the gate (a set)
  KEYS[2] seckill:{vid}:room:pow:<challenge>  the spent mark of this solution's challenge
  ARGV[1] the user id
  ARGV[2] ms the spent mark lives (the challenge's expiry from now); '0': the solution did not
          check out (or none was sent), so only a pass from before counts
  ARGV[3] when the passed set may go (epoch ms: an hour after the sale's end)

  Returns 1 passed before, 2 passed now, 0 not passed (no valid solution, or one already spent)
]]
--#include gate-pass.lua
return passGate(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]))
