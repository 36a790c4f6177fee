/**
 * Lua scripts run atomically inside Redis. Keeping them here makes every cross-process
 * guarantee of the Redis backend visible in one file.
 */

/**
 * Compare-and-set transaction: applies the writes only when every watched key still holds
 * the value the caller read (nil compares as cjson.null). Returns {0} on conflict, else
 * {1, xadd ids...}. Runs on the shared connection, so no WATCH state is needed.
 */
export const COMPARE_AND_SET = `
local spec = cjson.decode(ARGV[1])
for i, key in ipairs(spec.watch) do
  local current = redis.call('GET', key)
  local expected = spec.expected[i]
  if expected == cjson.null then
    if current then return {0} end
  elseif current ~= expected then
    return {0}
  end
end
for _, pair in ipairs(spec.set) do redis.call('SET', pair[1], pair[2]) end
for _, key in ipairs(spec.del) do redis.call('DEL', key) end
local result = {1}
for _, log in ipairs(spec.logs) do
  for _, entry in ipairs(log[2]) do
    table.insert(result, redis.call('XADD', log[1], '*', 'd', entry))
  end
end
if spec.notify ~= cjson.null and spec.notify ~= '' then redis.call('PUBLISH', spec.notify, spec.notifyMessage) end
return result
`

/** Push with a cap: returns {length, dropped}. */
export const QUEUE_PUSH = `
local length = redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))
local cap = tonumber(ARGV[1])
local dropped = 0
if length > cap then
  dropped = length - cap
  redis.call('LTRIM', KEYS[1], dropped, -1)
  length = cap
end
return {length, dropped}
`

/** Acquire or renew a lease held by ARGV[1] for ARGV[2] ms. */
export const LEASE_ACQUIRE = `
local owner = redis.call('GET', KEYS[1])
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if owner then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`

export const LEASE_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

/**
 * Moves the first ARGV[1] items of KEYS[1] into KEYS[2] as {<meta>, "items": [...]}, only when
 * the front item's id is ARGV[2]. ARGV[3] is the meta object's JSON. Returns 1 when moved.
 */
export const QUEUE_MOVE_FRONT = `
local count = tonumber(ARGV[1])
local items = redis.call('LRANGE', KEYS[1], 0, count - 1)
if #items < count or #items == 0 then return 0 end
local first = cjson.decode(items[1])
if first.id ~= ARGV[2] then return 0 end
local meta = string.sub(ARGV[3], 1, -2)
local sep = ','
if meta == '{' then sep = '' end
redis.call('SET', KEYS[2], meta .. sep .. '"items":[' .. table.concat(items, ',') .. ']}')
redis.call('LTRIM', KEYS[1], count, -1)
return 1
`
