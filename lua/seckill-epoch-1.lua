--[[
  The epoch of this copy of a room sale in Redis (docs/fair-sale.md#a-redis-loss-in-the-room),
  for a grab token to carry: set by the first token minted after a preheat, kept by every later
  preheat and repair (they HSET the meta's fields, never delete the hash). A Redis that loses the
  sale loses the epoch with the spent nonces and the buyers; the next token mints another, and the
  grab script refuses a token whose epoch is not the meta's.

  KEYS[1]  seckill:{tag}:meta   the meta hash of the bucket the user grabs in
  ARGV[1]  a fresh epoch (16 hex digits), kept only if the meta has none

  Returns  the epoch, or false when the sale is not preheated (no meta: never create one here, a
           meta hash without its window would pass for a preheated sale)
]]
if redis.call('HEXISTS', KEYS[1], 'begin') == 0 then
  return false
end
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1])
return redis.call('HGET', KEYS[1], 'epoch')
