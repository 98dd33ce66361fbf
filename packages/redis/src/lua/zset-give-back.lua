-- Zset layout: deliveries that were reserved but never handed to a handler (a
-- consume loop stopping with its read-ahead) go back to the head of the ready
-- list, in their order, as the original job bytes (the pop's attempts + 1
-- lived only in the :reserved member, so the pop does not count), each with
-- the notify token its pop took.
-- KEYS[1] queues:<name>   KEYS[2] :reserved   KEYS[3] :notify
-- ARGV pairs (:reserved member, job), oldest first
-- Returns how many went back; a pair whose member is gone had expired and is left alone.
local back = 0
for i = #ARGV - 1, 1, -2 do
  if redis.call('ZREM', KEYS[2], ARGV[i]) == 1 then
    redis.call('LPUSH', KEYS[1], ARGV[i + 1])
    redis.call('RPUSH', KEYS[3], 1)
    back = back + 1
  end
end
return back
