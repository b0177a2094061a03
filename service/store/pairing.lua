-- Quick-match queues: join, leave and pair atomically (service/store/quickmatch.py).
--
-- Every key of one queue shares its hash tag, so this script touches one slot:
-- KEYS[1] queue (zset: player -> rating mu)   KEYS[2] since (hash: player -> ms joined)
-- KEYS[3] bots (hash: player -> seconds after which bots may fill the match, -1: never)
-- KEYS[4] groups (hash: group id -> JSON {"players": [...], "bots": n, "at": ms}): formed, to be made matches
--
-- ARGV[1] mode: "join", "leave" or "pair"   ARGV[2] now (ms)   ARGV[3] seats per match
-- ARGV[4] window base   ARGV[5] window growth per second   ARGV[6] window max (service/players/pairing.py)
-- ARGV[7] a fresh group id prefix
-- join: ARGV[8] player   ARGV[9] rating   ARGV[10] bots after (s, -1 never); then pairs that player
-- leave: ARGV[8] player; returns 1 if it was waiting, 0 if not (never queued, or already in a group)
-- pair: ARGV[8] anchors to try, the longest waiting first
--
-- A player is removed from the queue in the same step as it is put in a group: nobody is in two
-- groups, and nobody leaves the queue without a group or a leave. Returns {group id, ...} formed.
local now, seats = tonumber(ARGV[2]), tonumber(ARGV[3])
local base, grow, cap = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local mode = ARGV[1]

local function window(player)
  local since = tonumber(redis.call('HGET', KEYS[2], player) or now)
  return math.min(base + grow * math.max(now - since, 0) / 1000, cap), since
end

local formed = {}
local function group(anchor)
  local rating = tonumber(redis.call('ZSCORE', KEYS[1], anchor))
  if not rating then return end
  local reach, since = window(anchor)
  local near = redis.call('ZRANGEBYSCORE', KEYS[1], rating - reach, rating + reach, 'WITHSCORES', 'LIMIT', 0, 200)
  local found = {}
  for i = 1, #near, 2 do
    local other, score = near[i], tonumber(near[i + 1])
    if other ~= anchor then
      local distance = math.abs(score - rating)
      if distance <= window(other) then table.insert(found, {other, distance}) end
    end
  end
  table.sort(found, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local members = {anchor}
  for i = 1, math.min(#found, seats - 1) do table.insert(members, found[i][1]) end
  local bots = 0
  if #members < seats then
    local after = tonumber(redis.call('HGET', KEYS[3], anchor) or -1)
    if after < 0 or now - since < after * 1000 then return end
    bots = seats - #members
  end
  local id = ARGV[7] .. '-' .. #formed
  for _, member in ipairs(members) do
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[2], member)
    redis.call('HDEL', KEYS[3], member)
  end
  redis.call('HSET', KEYS[4], id, cjson.encode({players = members, bots = bots, at = now}))
  table.insert(formed, id)
end

if mode == 'join' then
  redis.call('ZADD', KEYS[1], 'NX', tonumber(ARGV[9]), ARGV[8])
  redis.call('HSETNX', KEYS[2], ARGV[8], now)
  redis.call('HSET', KEYS[3], ARGV[8], ARGV[10])
  group(ARGV[8])
  return formed
elseif mode == 'leave' then
  local removed = redis.call('ZREM', KEYS[1], ARGV[8])
  redis.call('HDEL', KEYS[2], ARGV[8])
  redis.call('HDEL', KEYS[3], ARGV[8])
  return removed
else
  local waiting = redis.call('HGETALL', KEYS[2])
  local order = {}
  for i = 1, #waiting, 2 do table.insert(order, {waiting[i], tonumber(waiting[i + 1])}) end
  table.sort(order, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  for i = 1, math.min(#order, tonumber(ARGV[8])) do group(order[i][1]) end
  return formed
end
