-- Legacy layout: deliveries that were reserved but never handed to a handler
-- (a consume loop stopping with its read-ahead) go back to the head of the
-- ready list byte for byte, in their order, so FIFO holds for the next reserve.
-- KEYS[1] <name>   KEYS[2] <name>:processing   KEYS[3] <name>:processing:deadlines
-- ARGV deadline members (<token>:<raw>), oldest first
-- Returns how many went back; one whose member is gone had expired and is left alone.
local back = 0
for i = #ARGV, 1, -1 do
  if redis.call('ZREM', KEYS[3], ARGV[i]) == 1 then
    local raw = string.sub(ARGV[i], 34)
    -- Read-ahead sits at the tail of :processing: look from there.
    if redis.call('LREM', KEYS[2], -1, raw) == 1 then
      redis.call('LPUSH', KEYS[1], raw)
      back = back + 1
    end
  end
end
return back
