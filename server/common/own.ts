/**
 * Reading maps keyed by ids or other client-given strings out of plain JSON objects. An id may be
 * `constructor`, `valueOf` or `toString`: `obj[id]` would find Object.prototype's
 * member instead of "absent", and `obj['__proto__'] = v` would replace the prototype instead of
 * adding a key. Code keyed by such strings uses a Map, or reads plain objects through these helpers.
 */

/**
 * The own property `key` of `record`, never one it inherits.
 * @example own({ alice: ['fw:read'] }, 'constructor') // undefined
 */
export function own<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined
}

/**
 * A JSON object's own entries as a Map; anything that is not a plain object gives an empty Map.
 * @example mapOf<Team>(doc?.items).get('valueOf') // undefined unless a team has that id
 */
export function mapOf<T>(record: unknown): Map<string, T> {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return new Map()
  return new Map(Object.entries(record as Record<string, T>))
}

/**
 * A Map as a plain object for JSON storage. Every key becomes an own property (`Object.fromEntries`
 * defines rather than assigns), so the stored layout is the one a plain object literal would have.
 * @example JSON.stringify(recordOf(new Map([['constructor', 1]]))) // '{"constructor":1}'
 */
export function recordOf<T>(map: ReadonlyMap<string, T>): Record<string, T> {
  return Object.fromEntries(map)
}

/**
 * A copy of a JSON object without a prototype, so that `copy[key]` and `key in copy` see only own keys.
 * @example ownRecord({ a: 1 })['toString'] // undefined
 */
export function ownRecord<T>(record: unknown): Record<string, T> {
  const copy = Object.create(null) as Record<string, T>
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return copy
  for (const [key, value] of Object.entries(record as Record<string, T>)) copy[key] = value
  return copy
}

/**
 * Sets the own property `key` of `record` as `Object.fromEntries` would: defined, so a key
 * `__proto__` stays a key. For records built entry by entry (a large one, a slice at a time).
 * @example setOwn(out, '__proto__', manifest) // out has an own key `__proto__`
 */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
  else record[key] = value
}

/**
 * Calls `visit` on each own entry of `record` (one key listing, no entry arrays), pausing when the
 * time slice is spent: for records whose size an upstream decides (a packument's versions).
 * @example await eachOwn(doc.versions, (version, manifest) => out.set(version, manifest), slice)
 */
export async function eachOwn<T>(
  record: Readonly<Record<string, T>> | null | undefined,
  visit: (key: string, value: T) => void,
  slice: { step(): Promise<void> },
): Promise<void> {
  if (record == null) return
  for (const key of Object.keys(record)) {
    visit(key, record[key])
    await slice.step()
  }
}
