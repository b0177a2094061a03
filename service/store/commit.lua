-- Commit one accepted action atomically: compare version, write the new
-- state, append to the action log, remember the idempotency key, publish.
--
-- KEYS[1] match hash   KEYS[2] action log stream   KEYS[3] log archive (archive.py)
-- KEYS[4] idempotency key (optional)
-- ARGV[1] expected version      ARGV[2] new state (JSON)     ARGV[3] status
-- ARGV[4] to_act (JSON)         ARGV[5] result (JSON or "")  ARGV[6] acting seat
-- ARGV[7] action (JSON)         ARGV[8] events (JSON)        ARGV[9] now (ms)
-- ARGV[10] pub/sub channel      ARGV[11] TTL of the match, seconds
-- ARGV[12] request fingerprint ARGV[13] idempotency TTL, seconds
-- ARGV[14] the record of a default action the service played for a late seat (JSON), or ""
-- ARGV[15] the new state's hash in the match's chain (docs/fairness.md), or "" for a match without one
--
-- The message published is the whole update, a JSON object: the log entry's fields, "version" and the
-- match's "result" (null until it ends), so that followers read nothing back (service/store/live.py).
-- ARGV[3..9] and ARGV[14] are JSON already (or a plain status word): spliced as they are.
--
-- Returns {"ok", new_version}, {"conflict", current_version},
-- {"duplicate", idempotency record (JSON)} or {"missing"}.
if KEYS[4] then
  local seen = redis.call('GET', KEYS[4])
  if seen then return {'duplicate', seen} end
end
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {'missing'} end
current = tonumber(current)
if current ~= tonumber(ARGV[1]) then return {'conflict', current} end
local version = current + 1
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'version', version, 'status', ARGV[3],
           'to_act', ARGV[4], 'result', ARGV[5], 'updated', ARGV[9])
local entry = {'seat', ARGV[6], 'action', ARGV[7], 'events', ARGV[8], 'at', ARGV[9], 'status', ARGV[3],
               'to_act', ARGV[4]}
if ARGV[15] and ARGV[15] ~= '' then  -- the chain's new head; the log keeps no hash (records.py recomputes them)
  redis.call('HSET', KEYS[1], 'state_hash', ARGV[15])
end
if ARGV[14] ~= '' then
  table.insert(entry, 'auto')
  table.insert(entry, ARGV[14])
end
redis.call('XADD', KEYS[2], version .. '-0', unpack(entry))
local ttl = tonumber(ARGV[11])
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('EXPIRE', KEYS[3], ttl)
if KEYS[4] then
  redis.call('SET', KEYS[4], cjson.encode({fingerprint = ARGV[12], version = version}), 'EX', tonumber(ARGV[13]))
end
local auto = ARGV[14] ~= '' and ARGV[14] or 'null'
local result = ARGV[5] ~= '' and ARGV[5] or 'null'
redis.call('PUBLISH', ARGV[10], '{"version":' .. version .. ',"seat":' .. ARGV[6] .. ',"status":"' .. ARGV[3] ..
           '","to_act":' .. ARGV[4] .. ',"at":' .. ARGV[9] .. ',"action":' .. ARGV[7] .. ',"events":' .. ARGV[8] ..
           ',"auto":' .. auto .. ',"result":' .. result .. '}')
return {'ok', version}
