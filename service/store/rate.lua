-- Apply one rated match to one player, once (service/store/ratings.py).
--
-- KEYS[1] the player's ratings (hash: "<game>/<variant>" -> JSON)   KEYS[2] the player's rated matches (zset)
-- ARGV[1] match id   ARGV[2] "<game>/<variant>"   ARGV[3] the rating as the plan read it (JSON, '' for none)
-- ARGV[4] the rating after the match (JSON: mu, sigma)   ARGV[5] outcome: win, loss or draw
-- ARGV[6] when the match ended (ms)   ARGV[7] how long to remember rated matches (ms)
-- ARGV[8], ARGV[9] a new player's mu and sigma (what the plan read as '')
--
-- Returns the player's rating now (JSON). A match already counted changes nothing: a retry is harmless.
-- If the rating is no longer the one the plan read (another match of the player was rated in between),
-- the plan's change (mu moved by the difference, sigma scaled by the ratio) is applied to the current one.
local current = redis.call('HGET', KEYS[1], ARGV[2])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return current end
local after = cjson.decode(ARGV[4])
local rating
if (current or '') == ARGV[3] then
  rating = current and cjson.decode(current) or {games = 0, wins = 0, losses = 0, draws = 0}
  rating.mu, rating.sigma = after.mu, after.sigma
else
  rating = cjson.decode(current)
  local before = ARGV[3] ~= '' and cjson.decode(ARGV[3]) or {mu = tonumber(ARGV[8]), sigma = tonumber(ARGV[9])}
  rating.mu = rating.mu + (after.mu - before.mu)
  rating.sigma = rating.sigma * (after.sigma / before.sigma)
end
rating.games = (rating.games or 0) + 1
local counted = ({win = 'wins', loss = 'losses', draw = 'draws'})[ARGV[5]]
rating[counted] = (rating[counted] or 0) + 1
rating.updated = tonumber(ARGV[6])
local encoded = cjson.encode(rating)
redis.call('HSET', KEYS[1], ARGV[2], encoded)
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[6]) - tonumber(ARGV[7]))
return encoded
