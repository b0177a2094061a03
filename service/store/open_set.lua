-- Open a set for one player in one step on the player's slot (service/store/collections.py, open_set):
-- the allowance is taken, the contents added and the opening recorded together, or nothing happens.
-- KEYS[1] collection (hash: "<kind>:<id>" -> count)   KEYS[2] collection meta (hash)
-- KEYS[3] today's refills (counter)   KEYS[4] openings (sorted set: id -> ms)   KEYS[5] opening records (hash)
-- KEYS[6] the request's idempotency record (a string; used only when ARGV[7] is '1')
-- ARGV[1] kind   ARGV[2] 'once' for a set a player opens once (the starter), else 'daily'
-- ARGV[3] opening id   ARGV[4] now (ms)   ARGV[5] sets a day   ARGV[6] seconds the day counter lives
-- ARGV[7] '1' when idempotent   ARGV[8] seconds an idempotency record lives
-- ARGV[9] the record as opened from the daily allowance (or once)   ARGV[10] as opened from a grant
-- ARGV[11..] field, count pairs to add
if ARGV[7] == '1' then
  local seen = redis.call('GET', KEYS[6])
  if seen then return {'repeat', seen} end
end
local allowance
if ARGV[2] == 'once' then
  local opened = redis.call('HGET', KEYS[2], 'once:' .. ARGV[1])
  if opened then return {'opened_before', opened} end
  redis.call('HSET', KEYS[2], 'once:' .. ARGV[1], ARGV[3])
  allowance = 'once'
else
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used < tonumber(ARGV[5]) then
    redis.call('INCR', KEYS[3])
    redis.call('EXPIRE', KEYS[3], ARGV[6])
    allowance = 'daily'
  elseif tonumber(redis.call('HGET', KEYS[2], 'grants:' .. ARGV[1]) or '0') > 0 then
    redis.call('HINCRBY', KEYS[2], 'grants:' .. ARGV[1], -1)
    allowance = 'grant'
  else
    return {'none_left', tostring(used)}
  end
end
for i = 11, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[5], ARGV[3], allowance == 'grant' and ARGV[10] or ARGV[9])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[3])
if ARGV[7] == '1' then redis.call('SET', KEYS[6], ARGV[3], 'EX', ARGV[8]) end
return {'ok', allowance}
