import type { TxWrites } from './backend'
import { stringifyCooperatively, stringifyIfSmall } from './cooperative-json'
import { keepStoredText, type StoredText } from './stored-text'
import { TimeSlice } from './time-slice'

/**
 * Lua scripts run atomically inside Redis. Keeping them here makes every cross-process
 * guarantee of the Redis backend visible in one file.
 */

/**
 * Compare-and-set transaction over KEYS (every key it touches, declared for Redis Cluster). ARGV[1]
 * is a JSON spec naming keys by their index in KEYS and values by their index in ARGV:
 * - `w`: watched keys as [index, 0] (must be absent), [index, 1, value] (must hold exactly it)
 *   or [index, 2, sha1hex] (long values: the hash travels instead of the value, which for a delivery
 *   index is 4 KB on every write);
 * - `s`: [index, argv] to set KEYS[index] to ARGV[argv]; `d`: indexes to delete; `l`: [index,
 *   [argv...]] to XADD;
 * - `p`: [channel, message] pairs to PUBLISH, in order;
 * - `r`: 1 when a conflict should answer what the watched keys hold (a caller that assumed values
 *   without reading them needs them next: the read is saved).
 * Values travel as ARGV of their own, not inside the spec: a 1 MiB firewall written into the spec
 * was escaped once more by `JSON.stringify` and decoded by cjson inside Redis.
 * Returns {0} on conflict ({0, value or nil per watched key} with `r`), else {1, xadd ids...}.
 * Runs on the shared connection: no WATCH state.
 */
export const COMPARE_AND_SET = `
local spec = cjson.decode(ARGV[1])
local function refused()
  if spec.r ~= 1 then return {0} end
  local stored = {0}
  for i, watched in ipairs(spec.w) do stored[i + 1] = redis.call('GET', KEYS[watched[1]]) end
  return stored
end
for _, watched in ipairs(spec.w) do
  local current = redis.call('GET', KEYS[watched[1]])
  local kind = watched[2]
  if kind == 0 then
    if current then return refused() end
  elseif not current then
    return refused()
  elseif kind == 1 then
    if current ~= watched[3] then return refused() end
  elseif redis.sha1hex(current) ~= watched[3] then
    return refused()
  end
end
for _, pair in ipairs(spec.s) do redis.call('SET', KEYS[pair[1]], ARGV[pair[2]]) end
for _, index in ipairs(spec.d) do redis.call('DEL', KEYS[index]) end
local result = {1}
for _, log in ipairs(spec.l) do
  for _, entry in ipairs(log[2]) do
    table.insert(result, redis.call('XADD', KEYS[log[1]], '*', 'd', ARGV[entry]))
  end
end
for _, message in ipairs(spec.p) do redis.call('PUBLISH', message[1], message[2]) end
return result
`

/** A watched key of the COMPARE_AND_SET spec (`w`): absent, or holding `value` (as it is when short, else by SHA-1). */
function watchedKey(position: number, value: StoredText | null): [number, 0] | [number, 1 | 2, string] {
  return value === null ? [position, 0] : [position, ...value.check()]
}

/**
 * The KEYS and the ARGV of a COMPARE_AND_SET (the spec, then the values): `watched` raw keys must
 * hold their JSON value (null: absent), then `writes` (keys named as the backend names them, `raw`
 * giving the Redis key; a log `name` is the stream `raw("log:name")`) apply and `publish` goes out.
 * Every key the script touches is declared, so a cluster routes it to the slot's node; the spec
 * names them by position (Lua's KEYS counts from 1). Values are serialised one after another in
 * turns (`stringifyCooperatively`, one budget for the whole call): the text `JSON.stringify` writes.
 * The text of each value set is kept (stored-text.ts): a later transaction assuming it compares that.
 */
export async function compareAndSetCall(
  watched: [string, StoredText | null][],
  writes: Pick<TxWrites, 'set' | 'delete' | 'logs'>,
  raw: (key: string) => string,
  publish: { channel: string; message: string }[],
  options: { storedOnRefusal?: boolean } = {},
): Promise<{ keys: string[]; argv: string[] }> {
  const slice = new TimeSlice()
  const keyLists = new WeakMap<object, string[]>()
  const values: string[] = []
  /**
   * The ARGV index (Lua counts from 1, ARGV[1] is the spec) of `value`, serialised: at once when it
   * is small and the slice has time left (no turn taken: a delivery's cursor and record writes are
   * all small, and each value's hop through the cooperative writer was a promise and a microtask
   * wave for every webhook of a burst), otherwise in turns.
   */
  const argv = (value: unknown): number | Promise<number> => {
    const text = slice.spent() ? null : stringifyIfSmall(value, keyLists)
    if (text !== null) return values.push(text) + 1
    return stringifyCooperatively(value, slice, keyLists).then(({ pieces }) => values.push(pieces.join('')) + 1)
  }
  const set: [string, number][] = []
  for (const [key, value] of Object.entries(writes.set ?? {})) {
    const argIndex = argv(value)
    const index = typeof argIndex === 'number' ? argIndex : await argIndex
    keepStoredText(value, values[index - 2])
    set.push([raw(key), index])
  }
  const del = (writes.delete ?? []).map(raw)
  const logs: [string, number[]][] = []
  for (const [log, entries] of Object.entries(writes.logs ?? {})) {
    const indexes: number[] = []
    for (const entry of entries) {
      const index = argv(entry)
      indexes.push(typeof index === 'number' ? index : await index)
    }
    logs.push([raw(`log:${log}`), indexes])
  }
  const keys = [
    ...new Set([...watched.map(([key]) => key), ...set.map(([key]) => key), ...del, ...logs.map(([log]) => log)]),
  ]
  const position = new Map(keys.map((key, index) => [key, index + 1]))
  const spec = {
    w: watched.map(([key, value]) => watchedKey(position.get(key)!, value)),
    s: set.map(([key, value]) => [position.get(key), value]),
    d: del.map((key) => position.get(key)),
    l: logs.map(([log, entries]) => [position.get(log), entries]),
    p: publish.map(({ channel, message }) => [channel, message]),
    ...(options.storedOnRefusal ? { r: 1 } : {}),
  }
  return { keys, argv: [JSON.stringify(spec), ...values] }
}

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

/**
 * Lease calls in order, one per KEYS entry, each with three ARGV (operation, owner, ttl in ms):
 * `a` acquires or renews for the owner (1, or 0 when another owner holds it), `r` releases when
 * the owner holds it (1), `o` answers the owner (nil when free). Returns the answers in order.
 */
export const LEASE_CALLS = `
local answers = {}
for i, key in ipairs(KEYS) do
  local operation, owner, ttl = ARGV[3 * i - 2], ARGV[3 * i - 1], ARGV[3 * i]
  local current = redis.call('GET', key)
  if operation == 'o' then
    answers[i] = current
  elseif operation == 'r' then
    if current == owner then redis.call('DEL', key) end
    answers[i] = 1
  elseif current == owner then
    redis.call('PEXPIRE', key, ttl)
    answers[i] = 1
  elseif current then
    answers[i] = 0
  else
    redis.call('SET', key, owner, 'PX', ttl)
    answers[i] = 1
  end
end
return answers
`
