-- Legacy layout ack.
-- KEYS[1] <name>:processing   KEYS[2] <name>:processing:deadlines
-- ARGV[1] deadline member   ARGV[2] raw value
-- Returns 0 when the reservation had already expired (nothing is touched).
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('LREM', KEYS[1], 1, ARGV[2])
return 1
