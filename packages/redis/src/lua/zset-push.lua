-- Zset layout publish: append to the ready list and leave one wake-up token.
-- KEYS[1] queues:<name>   KEYS[2] queues:<name>:notify
-- ARGV[1] payload
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], 1)
return 1
