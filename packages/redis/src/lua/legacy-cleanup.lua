-- Legacy layout cleanup of +inf deadline members (retry_after was null).
-- Run only while every consumer of the queue is stopped.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- Returns the number of members handled.
local members = redis.call('ZRANGEBYSCORE', KEYS[3], '+inf', '+inf')
for _, m in ipairs(members) do
  local raw = string.sub(m, 34)
  if redis.call('LREM', KEYS[2], 1, raw) == 1 then
    redis.call('RPUSH', KEYS[1], raw)
  end
  redis.call('ZREM', KEYS[3], m)
end
return #members
