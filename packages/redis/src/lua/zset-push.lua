-- Zset layout publish: append the payloads to the ready list in order and leave one wake-up token each.
-- KEYS[1] queues:<name>   KEYS[2] queues:<name>:notify
-- ARGV[1..n] payloads
-- Variadic RPUSHes of at most 1,000 values (unpack's stack limit): a batch
-- costs two commands per thousand messages, not two per message.
local n = #ARGV
for first = 1, n, 1000 do
  local last = math.min(first + 999, n)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  local tokens = {}
  for i = 1, last - first + 1 do
    tokens[i] = 1
  end
  redis.call('RPUSH', KEYS[2], unpack(tokens))
end
return n
