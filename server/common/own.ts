/** Reading client-keyed JSON objects safely: the helpers live with the storage that reads them back. */
export { mapOf, own, ownRecord, recordOf } from '../../storage/own'

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
