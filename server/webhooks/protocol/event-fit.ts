import type { NamespaceEvent } from '../../events/schemas'

/**
 * An event too large for one delivery (spec 6.2 and 8: 512 KB per delivery body) goes out with
 * its `data` cut and `payloadTruncated: true`; the log keeps it whole, readable by id
 * (`GET /v1/{ns}/events/{eventId}`). The cut keeps the shape the event schema describes: every
 * key of every object stays while it can, strings get shorter, arrays and records keep their
 * leading items, the largest values give way first and small ones (enum values, ids) never, so a
 * cut event still validates against the served schema.
 */

/** An event as delivered: as stored, or cut to fit with the flag set. */
export type DeliveredEvent = NamespaceEvent & { payloadTruncated?: true }

/** Values this small are never cut (enum values, ids, numbers): a cut one could break its schema. */
const SMALL = 256

/**
 * The event as it fits in `maxBytes` of JSON, and that JSON. An event that fits is returned as
 * is (the same object); a larger one is a copy with `data` cut and `payloadTruncated: true`.
 * @example Buffer.byteLength(fitEvent(event, 512 * 1024 - 25).json) <= 512 * 1024 - 25 // true
 */
export function fitEvent(event: NamespaceEvent, maxBytes: number): { event: DeliveredEvent; json: string } {
  const json = JSON.stringify(event)
  if (Buffer.byteLength(json) <= maxBytes) return { event, json }
  const shell: DeliveredEvent = { ...event, data: {}, payloadTruncated: true }
  const sizes = new JsonSizes()
  // The shell holds `{}` where the data goes: the data may take those 2 bytes and the rest.
  const budget = maxBytes - sizes.of(shell) + 2
  // The cut counts exactly; the result is judged all the same, and cut tighter should it miss.
  for (let slack = 0; slack <= 1024; slack += 1024) {
    const data = sizes.shrink(event.data, budget - slack)
    const cut: DeliveredEvent = { ...shell, data: isPlainObject(data) ? data : {} }
    const cutJson = JSON.stringify(cut)
    if (Buffer.byteLength(cutJson) <= maxBytes) return { event: cut, json: cutJson }
  }
  return { event: shell, json: JSON.stringify(shell) }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Byte sizes of JSON values as `JSON.stringify` writes them (data read from the log: strings,
 * numbers, booleans, null, arrays, plain objects), each object's measured once: cutting walks the
 * tree instead of serialising every subtree again at every level.
 */
class JsonSizes {
  private readonly memo = new WeakMap<object, number>()

  of(value: unknown): number {
    // A long string is measured natively; a short one in JS (cheaper than a native call).
    if (typeof value === 'string')
      return value.length > 4096 ? Buffer.byteLength(JSON.stringify(value)) : stringBytes(value, Infinity).bytes
    if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4
    if (typeof value === 'boolean') return value ? 4 : 5
    if (value === null || typeof value !== 'object') return 4
    const known = this.memo.get(value)
    if (known !== undefined) return known
    let size = 2
    if (Array.isArray(value)) {
      for (const item of value) size += this.of(item)
      size += Math.max(0, value.length - 1)
    } else {
      let count = 0
      const record = value as Record<string, unknown>
      // Own enumerable keys, as JSON.stringify visits them (data from the log has no prototype keys).
      for (const key in record) {
        if (!Object.prototype.hasOwnProperty.call(record, key) || record[key] === undefined) continue
        size += stringBytes(key, Infinity).bytes + 1 + this.of(record[key])
        count++
      }
      size += Math.max(0, count - 1)
    }
    this.memo.set(value, size)
    return size
  }

  /** `value` in at most `budget` bytes of JSON, its shape kept (see the file comment). */
  shrink(value: unknown, budget: number): unknown {
    if (this.of(value) <= budget) return value
    if (typeof value === 'string') return value.slice(0, stringBytes(value, budget).length)
    if (Array.isArray(value)) return this.shrinkArray(value, budget)
    if (isPlainObject(value)) return this.shrinkObject(value, budget)
    // Numbers, booleans and null are a few bytes: the caller drops the entry if even that is too much.
    return value
  }

  /** The leading items that fit; the first one that does not is cut to the room left when it is large. */
  private shrinkArray(items: unknown[], budget: number): unknown[] {
    const kept: unknown[] = []
    let used = 2
    for (const item of items) {
      const separator = kept.length > 0 ? 1 : 0
      const room = budget - used - separator
      const size = this.of(item)
      if (size <= room) {
        kept.push(item)
        used += separator + size
        continue
      }
      if (size > SMALL && room > 2) {
        const cut = this.shrink(item, room)
        if (this.of(cut) <= room) kept.push(cut)
      }
      break
    }
    return kept
  }

  /**
   * Every key kept while it can be: the largest values are cut first (never one of `SMALL` bytes
   * or less); only when that is not enough do whole entries go, the last first (the fields a
   * schema requires come first in every event's data, and a record keeps its leading entries).
   */
  private shrinkObject(object: Record<string, unknown>, budget: number): Record<string, unknown> {
    const entries = Object.entries(object)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => ({ key, value, keyBytes: stringBytes(key, Infinity).bytes + 1, bytes: this.of(value) }))
    // `{}`, every `"key":value`, and the commas between them: exact, and kept exact below.
    let size =
      2 + Math.max(0, entries.length - 1) + entries.reduce((sum, entry) => sum + entry.keyBytes + entry.bytes, 0)
    const large = entries.filter((entry) => entry.bytes > SMALL).sort((a, b) => b.bytes - a.bytes)
    for (const entry of large) {
      if (size <= budget) break
      const value = this.shrink(entry.value, Math.max(2, entry.bytes - (size - budget)))
      const bytes = this.of(value)
      size += bytes - entry.bytes
      entry.value = value
      entry.bytes = bytes
    }
    let kept = entries.length
    while (size > budget && kept > 0) {
      const last = entries[--kept]
      size -= last.keyBytes + last.bytes + (kept > 0 ? 1 : 0)
    }
    // fromEntries defines own data properties, whatever the keys are (`__proto__` included).
    return Object.fromEntries(entries.slice(0, kept).map((entry) => [entry.key, entry.value]))
  }
}

/**
 * The JSON size of `text` (quotes included) as `JSON.stringify` escapes it (`\"`, `\\`, `\n` and
 * friends, `\u00XX`, lone surrogates as `\uXXXX`), counted in one pass up to `budget`: `length`
 * is how many UTF-16 units fit (a surrogate pair is never split), `bytes` their size.
 */
function stringBytes(text: string, budget: number): { length: number; bytes: number } {
  let used = 2
  let index = 0
  for (; index < text.length; index++) {
    const code = text.charCodeAt(index)
    let width: number
    if (code === 0x22 || code === 0x5c || (code >= 0x08 && code <= 0x0d && code !== 0x0b)) width = 2
    else if (code < 0x20) width = 6
    else if (code < 0x80) width = 1
    else if (code < 0x800) width = 2
    else if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        if (used + 4 > budget) break
        used += 4
        index++
        continue
      }
      width = 6
    } else if (code >= 0xdc00 && code <= 0xdfff) width = 6
    else width = 3
    if (used + width > budget) break
    used += width
  }
  return { length: index, bytes: used }
}
