-- Claim a seat atomically.
--
-- KEYS[1] match hash
-- ARGV[1] seat wanted (-1: the lowest free one)   ARGV[2] seat record (JSON)
-- ARGV[3] now (ms)   ARGV[4] pub/sub channel
-- ARGV[5] the player the seat is bound to, or '': a player gets one seat of a match unless it is hot-seat
--
-- Returns {"ok", seat, status}, {"taken"}, {"full"}, {"no_such_seat"}, {"already_seated", seat} or {"missing"}.
local seats = redis.call('HGET', KEYS[1], 'seats')
if not seats then return {'missing'} end
seats = tonumber(seats)
local wanted = tonumber(ARGV[1])
if wanted >= seats then return {'no_such_seat'} end
if ARGV[5] and ARGV[5] ~= '' and redis.call('HGET', KEYS[1], 'hot_seat') ~= '1' then
  for i = 0, seats - 1 do
    local raw = redis.call('HGET', KEYS[1], 'seat:' .. i)
    if raw and cjson.decode(raw)['player'] == ARGV[5] then return {'already_seated', i} end
  end
end
local seat = -1
if wanted >= 0 then
  if redis.call('HEXISTS', KEYS[1], 'seat:' .. wanted) == 1 then return {'taken'} end
  seat = wanted
else
  for i = 0, seats - 1 do
    if redis.call('HEXISTS', KEYS[1], 'seat:' .. i) == 0 then seat = i; break end
  end
  if seat < 0 then return {'full'} end
end
redis.call('HSET', KEYS[1], 'seat:' .. seat, ARGV[2], 'updated', ARGV[3])
local filled = 0
for i = 0, seats - 1 do
  filled = filled + redis.call('HEXISTS', KEYS[1], 'seat:' .. i)
end
local status = redis.call('HGET', KEYS[1], 'status')
-- a match still to be dealt (deal = pending: docs/fairness.md) starts when deal.lua has dealt it
if filled == seats and status == 'waiting' and not redis.call('HGET', KEYS[1], 'deal') then
  status = 'active'
  redis.call('HSET', KEYS[1], 'status', status)
end
redis.call('PUBLISH', ARGV[4], 'seat:' .. seat)
return {'ok', seat, status}
