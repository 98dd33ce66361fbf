-- Zset layout: read-ahead deliveries whose handlers begin now become what
-- Laravel's pop leaves: the raw job (held under a short lease, so a crash
-- returns it uncounted) is replaced by its cjson member with attempts + 1,
-- scored by the retry_after deadline.
-- KEYS[1] :reserved   ARGV[1] deadline score   ARGV[2..] pairs (raw job, member)
-- Returns one flag per pair: 1 when begun, 0 when the lease had lapsed and the
-- job was recovered (nothing is added).
local begun = {}
for i = 2, #ARGV - 1, 2 do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i + 1])
    begun[#begun + 1] = 1
  else
    begun[#begun + 1] = 0
  end
end
return begun
