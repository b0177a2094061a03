-- Spend a stream ticket: its first presentation marks it used, atomically (two presentations at once:
-- one wins, the other sees it used).
--
-- KEYS[1] the ticket's key   ARGV[1] now (ms)
--
-- Returns {"ok", match id, seat, token hash}, {"expired"}, {"used"} or {"unknown"} (never issued, or
-- expired and forgotten). An expired ticket is spent too: a ticket is good for one presentation.
local ticket = redis.call('HMGET', KEYS[1], 'match', 'seat', 'token', 'expires', 'used')
if not ticket[1] then return {'unknown'} end
if ticket[5] then return {'used'} end
redis.call('HSET', KEYS[1], 'used', ARGV[1])
if tonumber(ticket[4]) <= tonumber(ARGV[1]) then return {'expired'} end
return {'ok', ticket[1], ticket[2], ticket[3]}
