--[[
  Gives a cancelled or refunded seckill order's unit back to the sale in Redis, once per order:
  the order id goes into the voucher's returned set first, so a retry (the worker or the backstop
  after a crash between the MySQL commit and this call) changes nothing the second time. The
  stock rises only if the buyer really left the buyers set, so `stock + |buyers| = initial` holds
  whatever Redis lost meanwhile. The buyer forfeits the sale: grab, cancel, grab again would let
  one account hold a unit for free, again and again, so the grab script refuses anyone in the
  forfeit set (rebuilt by preheat from the cancelled and refunded orders in MySQL).

  KEYS[1]  seckill:{vid}:stock
  KEYS[2]  seckill:{vid}:buyers
  KEYS[3]  seckill:{vid}:returned   set of order ids already given back
  KEYS[4]  seckill:{vid}:forfeit    set of user ids who gave a unit back
  ARGV[1]  orderId   ARGV[2] userId

  Returns  1 returned now, 0 already returned before
]]
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('SADD', KEYS[4], ARGV[2])
if redis.call('SREM', KEYS[2], ARGV[2]) == 1 then
  redis.call('INCR', KEYS[1])
end
return 1
