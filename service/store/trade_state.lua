-- Move a trade from one status to the next, in one step on the trade's slot (service/store/trades.py):
-- a compare-and-set, so that of two processes moving one trade, one moves it and the other learns where
-- it stands. An offer past its expiry moves only to 'expired'.
-- KEYS[1] the trade (hash)
-- ARGV[1] expected status   ARGV[2] new status   ARGV[3] now (ms)   ARGV[4] the party who must be acting
-- ('from', 'to' or '' for none)   ARGV[5] that party's player id   ARGV[6] seconds a finished trade is kept
-- ARGV[7] reason ('' for none)
-- Returns {outcome, status after}: outcome 'moved', 'stale' (it was not in the expected status), 'expired',
-- 'not_party' or 'missing'.
local trade = KEYS[1]
local status = redis.call('HGET', trade, 'status')
if not status then return {'missing', ''} end
if ARGV[4] ~= '' and redis.call('HGET', trade, ARGV[4]) ~= ARGV[5] then return {'not_party', status} end
if status ~= ARGV[1] then return {'stale', status} end
local now = ARGV[3]
if status == 'offered' and tonumber(now) > tonumber(redis.call('HGET', trade, 'expires')) then
  redis.call('HSET', trade, 'status', 'expired', 'updated', now)
  redis.call('EXPIRE', trade, ARGV[6])
  return {'expired', 'expired'}
end
redis.call('HSET', trade, 'status', ARGV[2], 'updated', now)
if ARGV[7] ~= '' then redis.call('HSET', trade, 'reason', ARGV[7]) end
local final = {completed = true, failed = true, declined = true, cancelled = true, expired = true}
if final[ARGV[2]] then redis.call('EXPIRE', trade, ARGV[6]) end
return {'moved', ARGV[2]}
