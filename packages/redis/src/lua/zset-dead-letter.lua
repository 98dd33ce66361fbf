-- Zset layout dead-letter: write the record, then end the reservation.
-- KEYS[1] :reserved   KEYS[2] queues:<dlq>   KEYS[3] queues:<dlq>:notify
-- ARGV[1] reserved member   ARGV[2] record
-- The write comes first: if it fails the script aborts before any change and
-- the member stays in :reserved for recovery. Returns 0 when the reservation
-- had already expired (nothing is written).
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], 1)
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
