-- Renew a reservation while its handler runs: push the deadline member's score
-- out, only if the member is still there (both layouts: the legacy
-- :processing:deadlines member, the zset layout's :reserved member).
-- KEYS[1] the deadlines / :reserved zset   ARGV[1] new deadline score   ARGV[2] member
-- Returns 1 when renewed, 0 when the reservation had already expired and gone.
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
return 1
