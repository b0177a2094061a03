-- Give up a seat atomically: revoke its token, and free the seat or hand it to a bot.
--
-- KEYS[1] match hash
-- ARGV[1] seat   ARGV[2] the seat's token hash, as read when the caller's credential was checked
-- ARGV[3] now (ms)
-- ARGV[4] pub/sub channel   ARGV[5] the bot's seat record (JSON), or '' to free the seat
-- ARGV[6] the seat's player in a rated match, or '': leaving it while it is being played abandons it
--         (``abandoned:<seat>``, which the rating counts as a loss: service/players/ratings.py)
--
-- The token is checked again here, against the record being replaced, so a
-- seat that changed hands since the caller read it is never given up by
-- someone who no longer holds it. Returns {"ok"}, {"invalid"} or {"missing"}.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local raw = redis.call('HGET', KEYS[1], 'seat:' .. ARGV[1])
if not raw or cjson.decode(raw)['token'] ~= ARGV[2] then return {'invalid'} end
if ARGV[5] == '' then
  redis.call('HDEL', KEYS[1], 'seat:' .. ARGV[1])
else
  redis.call('HSET', KEYS[1], 'seat:' .. ARGV[1], ARGV[5])
end
redis.call('HSET', KEYS[1], 'updated', ARGV[3])
if ARGV[6] and ARGV[6] ~= '' and redis.call('HGET', KEYS[1], 'status') == 'active' then
  redis.call('HSET', KEYS[1], 'abandoned:' .. ARGV[1], ARGV[6])
end
redis.call('PUBLISH', ARGV[4], 'seat:' .. ARGV[1])
return {'ok'}
