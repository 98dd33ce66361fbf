-- Purge: deletes the waiting messages of a queue and returns how many there were.
-- KEYS[1] the ready list; KEYS[2] (zset layout only) the :delayed zset.
-- Reservations (:processing and its deadlines, :reserved) are left alone: they
-- belong to running consumers, which still settle them.
local n = redis.call('LLEN', KEYS[1])
if KEYS[2] then n = n + redis.call('ZCARD', KEYS[2]) end
redis.call('DEL', unpack(KEYS))
return n
