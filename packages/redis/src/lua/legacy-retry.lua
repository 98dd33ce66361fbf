-- Legacy layout retry: the copy goes straight back to the ready list (there is
-- no delayed set) and the reservation ends, in one step.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- ARGV[1] deadline member   ARGV[2] raw value   ARGV[3] value to republish
-- Returns 0 when the reservation had already expired (nothing is touched).
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[1], ARGV[3])
redis.call('LREM', KEYS[2], 1, ARGV[2])
return 1
