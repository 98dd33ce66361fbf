-- Legacy layout: settle finished acks, sweep expired reservations, then move
-- heads: one per free slot, then read-ahead while the queue is deep.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- ARGV[1] now (epoch seconds)   ARGV[2] deadline score ('+inf' when retry_after is null)
-- ARGV[3] free slots S   ARGV[4] read-ahead lease score (a few seconds out)
-- ARGV[5] number of acks A, then A deadline members
-- (the raw value is the member from byte 34: it is not sent twice)
-- ARGV[6 + A] the tokens, one 32-hex token per element wanted, end to end in
-- one string (one argument, not one each): S for the slots, then at most R for
-- the read-ahead, of which it takes half of what is left on the ready list once
-- the slots are served (a short queue stays for other consumers).
-- A slot's member is scored by the deadline; a read-ahead member by the lease,
-- which the consumer renews while it holds it and extends to the deadline when
-- its handler begins, so after a crash the sweep returns it within seconds.
-- Returns {acked, reserved}: acked[i] is 1, or 0 when that reservation had
-- already expired (nothing is touched); reserved holds the raw values, oldest first.

local slots = tonumber(ARGV[3])
local acks = tonumber(ARGV[5])
local acked = {}
for i = 6, 5 + acks do
  -- First the member: if it is gone the reservation expired and belongs to someone else now.
  if redis.call('ZREM', KEYS[3], ARGV[i]) == 1 then
    redis.call('LREM', KEYS[2], 1, string.sub(ARGV[i], 34))
    acked[#acked + 1] = 1
  else
    acked[#acked + 1] = 0
  end
end

local tokens = ARGV[6 + acks] or ''
local wanted = #tokens / 32
local reserved = {}
if wanted == 0 then
  return {acked, reserved}
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

local last = math.min(wanted, slots)
if last < wanted then
  -- Read-ahead: FIFO all the same, these are the next heads.
  local spare = math.floor((redis.call('LLEN', KEYS[1]) - slots) / 2)
  last = math.min(wanted, last + math.max(0, spare))
end
for i = 1, last do
  local raw = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not raw then break end
  local score = ARGV[2]
  if i > slots then score = ARGV[4] end
  redis.call('ZADD', KEYS[3], score, string.sub(tokens, 32 * i - 31, 32 * i) .. ':' .. raw)
  reserved[#reserved + 1] = raw
end
return {acked, reserved}
