-- Zset layout retry: move a reservation to :delayed in one step (no fallback).
-- KEYS[1] :reserved   KEYS[2] :delayed
-- ARGV[1] reserved member   ARGV[2] due score   ARGV[3] payload for :delayed
-- Returns 0 when the reservation had already expired (nothing is touched).
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
