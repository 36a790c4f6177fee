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

/**
 * Appends ARGV pairs (time in ms, entry) to the stream KEYS[1] under ids `<ms>-<seq>`, so the
 * entries keep their age; a time before the stream's newest id takes that id's. Returns the ids.
 */
export const LOG_APPEND_AT = `
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local floor = 0
if #newest > 0 then floor = tonumber(string.match(newest[1][1], '^(%d+)')) end
local ids = {}
for i = 1, #ARGV, 2 do
  local ms = tonumber(ARGV[i])
  if ms < floor then ms = floor end
  floor = ms
  table.insert(ids, redis.call('XADD', KEYS[1], string.format('%d-*', ms), 'd', ARGV[i + 1]))
end
return ids
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
