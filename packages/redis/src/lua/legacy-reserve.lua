-- Legacy layout reserve: sweep expired reservations, then move up to N heads.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- ARGV[1] now (epoch seconds)   ARGV[2] deadline score ('+inf' when retry_after is null)
-- ARGV[3..] one 32-hex token per element wanted
-- Returns the reserved raw values, oldest first.

-- Sweep: every expired body goes back byte for byte (attempts untouched).
-- Items on :processing with no member are never looked at.
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
for _, member in ipairs(due) do
  local raw = string.sub(member, 34)
  if redis.call('LREM', KEYS[2], 1, raw) == 1 then
    redis.call('RPUSH', KEYS[1], raw)
  end
  redis.call('ZREM', KEYS[3], member)
end

local out = {}
for i = 3, #ARGV do
  local raw = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not raw then break end
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[i] .. ':' .. raw)
  out[#out + 1] = raw
end
return out
