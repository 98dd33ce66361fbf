-- Zset layout: settle finished acks, then Laravel's pop semantics, batched and wrapped in pcall.
-- KEYS[1] queues:<name>   KEYS[2] :delayed   KEYS[3] :reserved   KEYS[4] :notify
-- ARGV[1] now (epoch seconds)   ARGV[2] reservation deadline score ('+inf' allowed)
-- ARGV[3] migration batch size (-1 = no limit)   ARGV[4] '1' to recover expired :reserved
-- ARGV[5] free slots S: pops one each   ARGV[6] read-ahead R: at most R more pops,
-- half of what is left on the ready list once the slots are served (a short
-- queue stays for other consumers)
-- ARGV[7] read-ahead lease score (a few seconds out)
-- ARGV[8] number of acks A, then A :reserved members
-- A slot's element is popped exactly as Laravel's pop does it (LPOP, a
-- :reserved member with attempts + 1 scored by the deadline, one notify
-- token), so Laravel's workers and this script share every key; a batch is
-- several such pops in one call. A read-ahead element is held as its raw job,
-- scored by the lease: the consumer renews the lease while it holds it and
-- turns it into the pop's member when a handler begins (zset-begin.lua), so
-- after a crash any migrate (Laravel's too) returns it unchanged and uncounted
-- within seconds.
-- Returns {acked, popped}: acked[i] is 1, or 0 when that member was already gone;
-- popped is a flat list of triples {job, member, decoded}, decoded 1 when the
-- job went through cjson, 0 when it did not (the member is then the raw job).

local acked = {}
for i = 1, tonumber(ARGV[8]) do
  acked[#acked + 1] = redis.call('ZREM', KEYS[3], ARGV[8 + i])
end

local slots = tonumber(ARGV[5])
local ahead = tonumber(ARGV[6])
local wanted = slots + ahead
local popped = {}
if wanted < 1 then
  return {acked, popped}
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

if ahead > 0 then
  local spare = math.floor((redis.call('LLEN', KEYS[1]) - slots) / 2)
  wanted = slots + math.min(ahead, math.max(0, spare))
end
-- A member already in :reserved (as the pop's member or as a read-ahead's raw
-- job) is a byte-identical job in flight (a poison body sent twice, the same
-- envelope sent twice): a second ZADD would fold the two into one reservation,
-- and settling the first would settle both. Such a copy goes back to the tail
-- and is reserved once the first one is settled.
local held = 0
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
  if redis.call('ZSCORE', KEYS[3], member) or (decoded == 1 and redis.call('ZSCORE', KEYS[3], job)) then
    redis.call('RPUSH', KEYS[1], job)
    held = held + 1
    -- Only held copies left: wait for their twins to settle.
    if held >= redis.call('LLEN', KEYS[1]) then break end
  else
    if #popped < 3 * slots then
      redis.call('ZADD', KEYS[3], ARGV[2], member)
    else
      -- Read-ahead: the raw job under the lease (the member is returned for zset-begin.lua).
      redis.call('ZADD', KEYS[3], ARGV[7], job)
    end
    redis.call('LPOP', KEYS[4])
    popped[#popped + 1] = job
    popped[#popped + 1] = member
    popped[#popped + 1] = decoded
  end
end
return {acked, popped}
