-- Renew reservations: push each member's score out to ARGV[1], only for a
-- member still there, and never lower a score (GT): a renewal that reaches
-- Redis after a longer one (a read-ahead lease after the handler began, a
-- call re-sent after NOSCRIPT) cannot shorten it. Both layouts: the legacy
-- :processing:deadlines members, the zset layout's :reserved members (a
-- running delivery's cjson member, or a read-ahead delivery's raw job).
-- KEYS[1] the deadlines / :reserved zset   ARGV[1] new deadline score   ARGV[2..] members
-- Returns one flag per member: 1 when renewed, 0 when it had already expired and gone.
local kept = {}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'GT', ARGV[1], ARGV[i])
    kept[#kept + 1] = 1
  else
    kept[#kept + 1] = 0
  end
end
return kept
