-- Legacy layout: settle finished acks, sweep expired reservations, then move up to N heads.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- ARGV[1] now (epoch seconds)   ARGV[2] deadline score ('+inf' when retry_after is null)
-- ARGV[3] number of acks A, then A pairs (deadline member, raw value)
-- ARGV[4 + 2A ..] one 32-hex token per element wanted
-- Returns {acked, reserved, depth}: acked[i] is 1, or 0 when that reservation had
-- already expired (nothing is touched); reserved holds the raw values, oldest
-- first; depth is the ready list's length afterwards (-1 when nothing was asked
-- for), which sizes the caller's next batch.

local acks = tonumber(ARGV[3])
local acked = {}
for i = 0, acks - 1 do
  -- First the member: if it is gone the reservation expired and belongs to someone else now.
  if redis.call('ZREM', KEYS[3], ARGV[4 + 2 * i]) == 1 then
    redis.call('LREM', KEYS[2], 1, ARGV[5 + 2 * i])
    acked[#acked + 1] = 1
  else
    acked[#acked + 1] = 0
  end
end

local first = 4 + 2 * acks
local reserved = {}
if first > #ARGV then
  return {acked, reserved, -1}
end

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

for i = first, #ARGV do
  local raw = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not raw then break end
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[i] .. ':' .. raw)
  reserved[#reserved + 1] = raw
end
return {acked, reserved, redis.call('LLEN', KEYS[1])}
