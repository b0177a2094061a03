-- One player's side of a trade, one idempotent step on that player's slot (service/store/trades.py).
-- The side's marker records what has been done to it; a step runs only from the marker it expects, so a
-- step repeated (a retry, a second process, a recovery sweep) changes nothing twice, and a side is never
-- debited after the trade was called off (the abort marks an untouched side 'void' first).
-- KEYS[1] the player's collection (hash)   KEYS[2] the side's marker (string)
-- ARGV[1] debit | credit | refund   ARGV[2] seconds the marker lives   ARGV[3..] field, count pairs
--   debit:  take what the side gives (all or nothing)     absent -> debited | short
--   credit: give it what it receives (the trade settles)  debited -> credited
--   refund: give back what it gave (the trade fails)      debited -> refunded; absent -> void
-- Returns the marker after the step.
local marker = redis.call('GET', KEYS[2])
local op = ARGV[1]
if op == 'debit' then
  if marker then return marker end
  for i = 3, #ARGV, 2 do
    if tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') < tonumber(ARGV[i + 1]) then
      redis.call('SET', KEYS[2], 'short', 'EX', ARGV[2])
      return 'short'
    end
  end
  for i = 3, #ARGV, 2 do
    if redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1])) == 0 then
      redis.call('HDEL', KEYS[1], ARGV[i])
    end
  end
  redis.call('SET', KEYS[2], 'debited', 'EX', ARGV[2])
  return 'debited'
end
if op == 'credit' or op == 'refund' then
  if marker == 'debited' then
    for i = 3, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
    local done = op == 'credit' and 'credited' or 'refunded'
    redis.call('SET', KEYS[2], done, 'EX', ARGV[2])
    return done
  end
  if not marker and op == 'refund' then
    redis.call('SET', KEYS[2], 'void', 'EX', ARGV[2])
    return 'void'
  end
  return marker or 'absent'
end
return redis.error_reply('trade_side.lua: unknown step ' .. op)
