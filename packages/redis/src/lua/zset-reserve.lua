-- Zset layout: settle finished acks, then Laravel's pop semantics, batched and wrapped in pcall.
-- KEYS[1] queues:<name>   KEYS[2] :delayed   KEYS[3] :reserved   KEYS[4] :notify
-- ARGV[1] now (epoch seconds)   ARGV[2] reservation deadline score ('+inf' allowed)
-- ARGV[3] migration batch size (-1 = no limit)   ARGV[4] '1' to recover expired :reserved
-- ARGV[5] how many jobs to pop at most   ARGV[6] number of acks A, then A :reserved members
-- Returns {acked, popped, depth}: acked[i] is 1, or 0 when that member was already gone;
-- popped is a flat list of triples {job, member, decoded}, decoded 1 when the
-- job went through cjson, 0 when it did not (the member is then the raw job);
-- depth is the ready list's length afterwards (-1 when nothing was asked for),
-- which sizes the caller's next batch.
-- Each element is popped exactly as Laravel's pop does it (LPOP, :reserved
-- member with attempts + 1, one notify token), so Laravel and this script
-- share every key; a batch is only several pops in one call.

local acked = {}
for i = 1, tonumber(ARGV[6]) do
  acked[#acked + 1] = redis.call('ZREM', KEYS[3], ARGV[6 + i])
end

local wanted = tonumber(ARGV[5])
local popped = {}
if wanted < 1 then
  return {acked, popped, -1}
end

local function migrate(from)
  local due
  if tonumber(ARGV[3]) < 0 then
    due = redis.call('ZRANGEBYSCORE', from, '-inf', ARGV[1])
  else
    due = redis.call('ZRANGEBYSCORE', from, '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
  end
  if #due == 0 then return end
  -- The due members are the lowest-ranked ones, so a rank range removes exactly them.
  redis.call('ZREMRANGEBYRANK', from, 0, #due - 1)
  for i = 1, #due, 100 do
    local last = math.min(i + 99, #due)
    redis.call('RPUSH', KEYS[1], unpack(due, i, last))
    for _ = i, last do
      redis.call('RPUSH', KEYS[4], 1)
    end
  end
end

-- cjson may re-encode (key order, [] -> {}, number format): the deliberate
-- exception to byte preservation, and only ever on the :reserved member.
local function bump(job)
  local decoded = cjson.decode(job)
  decoded['attempts'] = decoded['attempts'] + 1
  return cjson.encode(decoded)
end

migrate(KEYS[2])
if ARGV[4] == '1' then
  migrate(KEYS[3])
end

for _ = 1, wanted do
  local job = redis.call('LPOP', KEYS[1])
  if not job then break end
  local ok, member = pcall(bump, job)
  local decoded = 1
  if not ok then
    -- Keep the element rather than lose it: the raw job is the member.
    member = job
    decoded = 0
  end
  redis.call('ZADD', KEYS[3], ARGV[2], member)
  redis.call('LPOP', KEYS[4])
  popped[#popped + 1] = job
  popped[#popped + 1] = member
  popped[#popped + 1] = decoded
end
return {acked, popped, redis.call('LLEN', KEYS[1])}
