--[[
  release-lock: deletes a lock only if it still holds the caller's token, so a caller whose lock expired
  and was taken by another request cannot release that other request's lock.

  KEYS[1] the lock
  ARGV[1] the caller's token

  Returns 1 when released, 0 when the lock was not the caller's (expired or taken over)
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
