-- Save a named hand under the cap, atomically: two saves of a 20th hand at once keep 20, not 21 (the
-- count and the write were two round trips apart).
--
-- KEYS[1] the player's saved hands (hash: name -> JSON)   KEYS[2] the collection's meta hash
-- ARGV[1] name   ARGV[2] the hand's JSON   ARGV[3] the cap   ARGV[4] "1" to make it the default
--
-- Returns 1 when saved, 0 when the player already keeps the cap of other hands (nothing written).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[2], 'default_hand', ARGV[1])
else
  redis.call('HSETNX', KEYS[2], 'default_hand', ARGV[1])
end
return 1
