-- Zset layout publish: append the payloads to the ready list in order and leave one wake-up token each.
-- KEYS[1] queues:<name>   KEYS[2] queues:<name>:notify
-- ARGV[1..n] payloads
for i = 1, #ARGV do
  redis.call('RPUSH', KEYS[1], ARGV[i])
  redis.call('RPUSH', KEYS[2], 1)
end
return #ARGV
