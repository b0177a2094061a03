-- Move a match's older log entries into its compressed archive, atomically.
--
-- KEYS[1] action log stream   KEYS[2] archive string ("<last version>:" .. zlib(JSON))
-- ARGV[1] last archived version this process read (0: none)
-- ARGV[2] last version in the new archive   ARGV[3] the new archive
--
-- The stream is rebuilt with the entries it keeps rather than trimmed: XTRIM
-- only flags entries deleted inside their listpack node, which keeps its memory.
--
-- Returns 1 when moved, 0 when the archive changed meanwhile or the log is gone.
local current = redis.call('GET', KEYS[2])
local upto = 0
if current then upto = tonumber(string.match(current, '^(%d+):')) end
if upto ~= tonumber(ARGV[1]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
local kept = redis.call('XRANGE', KEYS[1], '(' .. ARGV[2] .. '-0', '+')
redis.call('SET', KEYS[2], ARGV[3], 'PX', ttl)
redis.call('DEL', KEYS[1])
for _, entry in ipairs(kept) do
  redis.call('XADD', KEYS[1], entry[1], unpack(entry[2]))
end
if #kept > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
