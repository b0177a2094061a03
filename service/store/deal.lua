-- Deal a match whose seed is committed (docs/fairness.md), once its last seat has joined: write the
-- state set up from the derived RNG seed, the first state hash and the entropies it was derived from,
-- and start the match.
--
-- KEYS[1] match hash
-- ARGV[1] state (JSON)   ARGV[2] RNG seed   ARGV[3] to_act (JSON)   ARGV[4] the set-up's state hash (the chain's head)
-- ARGV[5] the seats' entropies (JSON)   ARGV[6] now (ms)   ARGV[7] pub/sub channel
-- ARGV[8..] every seat's record as the caller read it, seat 0 first
--
-- The seats are checked against the records the entropies were read from, so a seat given up (or taken
-- by someone else) since then is never dealt with another's entropy. Returns {"ok"}, {"done"} (dealt
-- already) or {"moved"} (a seat changed: nothing written).
if redis.call('HGET', KEYS[1], 'deal') ~= 'pending' then return {'done'} end
local seats = tonumber(redis.call('HGET', KEYS[1], 'seats'))
for i = 0, seats - 1 do
  if redis.call('HGET', KEYS[1], 'seat:' .. i) ~= ARGV[8 + i] then return {'moved'} end
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'seed', ARGV[2], 'to_act', ARGV[3], 'state_hash', ARGV[4],
           'entropies', ARGV[5], 'status', 'active', 'updated', ARGV[6])
redis.call('HDEL', KEYS[1], 'deal')
-- followers re-read the match on a seat message: this one tells them it has started
redis.call('PUBLISH', ARGV[7], 'seat:dealt')
return {'ok'}
