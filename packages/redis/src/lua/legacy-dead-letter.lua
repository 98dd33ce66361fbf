-- Legacy layout dead-letter: write the record, then end the reservation.
-- KEYS[1] <name>:processing   KEYS[2] <name>:processing:deadlines   KEYS[3] <dlq>
-- ARGV[1] deadline member   ARGV[2] raw value   ARGV[3] record
-- The write comes first: if it fails the script aborts before any change and
-- the reservation stays for recovery. Returns 0 when the reservation had
-- already expired (nothing is written).
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('LREM', KEYS[1], 1, ARGV[2])
return 1
