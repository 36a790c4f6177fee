import { stringifyCooperatively } from '../../common/cooperative-json'
import { TimeSlice } from '../../common/time-slice'
import type { NamespaceEvent } from '../../events/schemas'

/**
 * An event too large for one delivery (spec 6.2 and 8: 512 KB per delivery body) goes out with
 * its `data` cut and `payloadTruncated: true`; the log keeps it whole, readable by id
 * (`GET /v1/{ns}/events/{eventId}`). The cut keeps the shape the event schema describes: every
 * key of every object stays while it can, strings get shorter, arrays and records keep their
 * leading items, the largest values give way first (cut down to a common size) and small ones
 * (enum values, ids) never, so a cut event still validates against the served schema.
 *
 * The event's data comes from outside (an API body of up to 1 MiB), so the cut costs about one
 * to two plain `JSON.stringify` of it (CONTRACT.md 8, bench/event-fit.bench.ts): one walk that measures
 * each part only as far as the room it may take, each object measured once (a WeakMap), an array
 * scanned no further than its room, and the result written once. All of it takes turns with the
 * rest of the process (a `TimeSlice`, common/time-slice.ts): a 1.4 MB event of 60,000 keys held
 * the loop for 150 ms in one task, so the event and the cut are written with
 * `stringifyCooperatively` and the walk pauses between the members of large objects and arrays.
 */

/** An event as delivered: as stored, or cut to fit with the flag set. */
export type DeliveredEvent = NamespaceEvent & { payloadTruncated?: true }

/** An event as delivered and its JSON, the bytes that go into the body. */
export interface FittedEvent {
  event: DeliveredEvent
  json: string
}

/** Values this small are never cut (enum values, ids, numbers): a cut one could break its schema. */
const SMALL = 256

/** A value measured no further than this many bytes is walked in one go (well under a millisecond). */
const SYNC_CAP = 16 * 1024

/**
 * The event as it fits in `maxBytes` of JSON, and that JSON. An event that fits is returned as
 * is (the same object); a larger one is a copy with `data` cut and `payloadTruncated: true`.
 * @example Buffer.byteLength((await fitEvent(event, 512 * 1024 - 25)).json) <= 512 * 1024 - 25 // true
 */
export async function fitEvent(event: NamespaceEvent, maxBytes: number, slice = new TimeSlice()): Promise<FittedEvent> {
  const keyLists: KeyLists = new WeakMap()
  const whole = await stringifyCooperatively(event, slice, keyLists)
  return whole.bytes <= maxBytes
    ? { event, json: whole.pieces.join('') }
    : cutEvent(event, whole.pieces, maxBytes, slice, keyLists)
}

/** The key lists of large objects, shared by the walks over one event (one listing each). */
export type KeyLists = WeakMap<object, string[]>

/**
 * `event`, whose JSON (`pieces`, written already to learn it is past `maxBytes`) does not fit,
 * with its data cut to fit and the flag set. `keyLists`: those the writing of `pieces` made.
 * @example (await cutEvent(hugeEvent, [JSON.stringify(hugeEvent)], 1024)).event.payloadTruncated // true
 */
export async function cutEvent(
  event: NamespaceEvent,
  pieces: readonly string[],
  maxBytes: number,
  slice = new TimeSlice(),
  keyLists: KeyLists = new WeakMap(),
): Promise<FittedEvent> {
  const shell: DeliveredEvent = { ...event, data: {}, payloadTruncated: true }
  const shellJson = JSON.stringify(shell)
  // The shell holds `{}` where the data goes: the data may take those 2 bytes and the rest.
  const budget = maxBytes - Buffer.byteLength(shellJson) + 2
  let data: unknown = null
  try {
    data = (await new Cutter(await allPlain(pieces, slice), slice, keyLists).cut(event.data, budget))?.value
  } catch (error) {
    // Nesting deeper than the stack (the event's JSON got written): the data goes empty.
    if (!(error instanceof RangeError)) throw error
  }
  if (!isPlainObject(data)) return { event: shell, json: shellJson }
  const cut: DeliveredEvent = { ...shell, data }
  const written = await stringifyCooperatively(cut, slice, keyLists)
  // The sizes are counted exactly; a value they misjudge (a `toJSON` that answers differently
  // each time) must still never make a body too large.
  return written.bytes <= maxBytes ? { event: cut, json: written.pieces.join('') } : { event: shell, json: shellJson }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** What `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
const isOmitted = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol'

/** An object serialised through its own `toJSON` (a Date): measured natively, never cut. */
const hasToJson = (value: object): boolean => typeof (value as { toJSON?: unknown }).toJSON === 'function'

/** A string, array or object can give way; a number, or an object with its own `toJSON`, cannot. */
const cuttable = (value: unknown): boolean =>
  typeof value === 'string' || (value !== null && typeof value === 'object' && !hasToJson(value))

/** A value cut to fit, and the exact byte size of its JSON. */
interface Cut {
  value: unknown
  bytes: number
}

/** One object entry while an object is cut: `keyBytes` counts `"key":`. */
interface Entry {
  key: string
  value: unknown
  keyBytes: number
  bytes: number
}

/**
 * Sizes and cuts of one event's data. `size(value, cap)` is the exact JSON byte size when it is
 * at most `cap`, otherwise some number above `cap` found without measuring further; exact sizes
 * of objects are remembered, and so are the bounds already passed, so nothing is measured twice
 * to the same depth. `size` runs in one go and is asked only small caps (or about values that
 * cannot be large); `sizeWithin` is the same measure taking turns on a large cap, and the cuts
 * take turns between the members they walk.
 */
class Cutter {
  private readonly exact = new WeakMap<object, number>()
  private readonly above = new WeakMap<object, number>()

  /** `plain`: every string in the data is printable ASCII but `"` and `\\`, one byte a character. */
  constructor(
    private readonly plain: boolean,
    private readonly slice: TimeSlice,
    // A record's keys listed once: Object.keys of a large record costs about as much as walking it.
    private readonly keyLists: KeyLists,
  ) {}

  size(value: unknown, cap: number): number {
    if (typeof value === 'string') return this.stringSize(value, cap)
    if (typeof value === 'number') return Number.isFinite(value) ? String(value).length : 4
    if (typeof value === 'boolean') return value ? 4 : 5
    if (value === null || typeof value !== 'object') return 4
    const known = this.exact.get(value)
    if (known !== undefined) return known
    const bound = this.above.get(value)
    if (bound !== undefined && bound > cap) return bound
    if (hasToJson(value)) return this.remember(value, Buffer.byteLength(JSON.stringify(value) ?? 'null'))
    let total = 2
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        if (index > 0) total++
        total += this.size(value[index], cap - total)
        if (total > cap) return this.passed(value, total)
      }
    } else {
      const record = value as Record<string, unknown>
      let count = 0
      for (const key of this.keysOf(record)) {
        const item = record[key]
        if (isOmitted(item)) continue
        if (count++ > 0) total++
        total += this.stringSize(key, Infinity) + 1
        total += this.size(item, cap - total)
        if (total > cap) return this.passed(value, total)
      }
    }
    return this.remember(value, total)
  }

  /** `size(value, cap)`, pausing between the members of what it walks when `cap` is large. */
  private async sizeWithin(value: unknown, cap: number): Promise<number> {
    if (cap <= SYNC_CAP || value === null || typeof value !== 'object' || hasToJson(value)) return this.size(value, cap)
    const known = this.exact.get(value)
    if (known !== undefined) return known
    const bound = this.above.get(value)
    if (bound !== undefined && bound > cap) return bound
    let total = 2
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        if (index > 0) total++
        total += await this.sizeWithin(value[index], cap - total)
        if (total > cap) return this.passed(value, total)
        await this.slice.step()
      }
    } else {
      const record = value as Record<string, unknown>
      let count = 0
      for (const key of this.keysOf(record)) {
        const item = record[key]
        if (isOmitted(item)) continue
        if (count++ > 0) total++
        total += this.stringSize(key, Infinity) + 1
        total += await this.sizeWithin(item, cap - total)
        if (total > cap) return this.passed(value, total)
        await this.slice.step()
      }
    }
    return this.remember(value, total)
  }

  /**
   * `value` in at most `budget` bytes of JSON, its shape kept (see the file comment): the value
   * itself when it fits, null when it cannot be placed there at all (a small value, a number,
   * or under 2 bytes of room). An array or object is not measured first: cutting it finds out.
   */
  async cut(value: unknown, budget: number): Promise<Cut | null> {
    if (typeof value === 'string') {
      const bytes = this.stringSize(value, budget)
      if (bytes <= budget) return { value, bytes }
      return budget >= 2 && this.stringSize(value, SMALL) > SMALL ? this.cutString(value, budget) : null
    }
    if (!cuttable(value)) {
      const bytes = this.size(value, budget)
      return bytes <= budget ? { value, bytes } : null
    }
    const object = value as object
    // Measured no further than SMALL: a small one is kept whole or left out, never cut.
    this.size(object, SMALL)
    const known = this.exact.get(object)
    if (known !== undefined && (known <= budget || known <= SMALL))
      return known <= budget ? { value, bytes: known } : null
    if (budget < 2) return null
    return Array.isArray(object)
      ? this.cutArray(object, budget)
      : this.cutObject(object as Record<string, unknown>, budget)
  }

  /** The leading items that fit; the first one that does not is cut to the room left when it is large. */
  private async cutArray(items: unknown[], budget: number): Promise<Cut> {
    const kept: unknown[] = []
    let used = 2
    for (const item of items) {
      await this.slice.step()
      const separator = kept.length > 0 ? 1 : 0
      const cut = await this.cut(item, budget - used - separator)
      if (cut) {
        kept.push(cut.value)
        used += separator + cut.bytes
      }
      // An item cut (or left out) ends the array: a later one would break the leading run.
      if (!cut || cut.value !== item) return { value: kept, bytes: used }
    }
    return { value: items, bytes: this.remember(items, used) }
  }

  /**
   * Every key kept while it can be: the large values (over `SMALL` bytes) are cut down to a
   * common size, the smaller ones kept whole; only when even the emptiest form of every large
   * value is too much do whole entries go, the last first (the fields a schema requires come
   * first in every event's data, and a record keeps its leading entries).
   */
  private async cutObject(record: Record<string, unknown>, budget: number): Promise<Cut> {
    const entries: Entry[] = []
    const large: Entry[] = []
    // The object with every large value in its emptiest form (`""`, `[]`, `{}`: 2 bytes).
    let least = 2
    let changed = false
    for (const key of this.keysOf(record)) {
      const value = record[key]
      if (isOmitted(value)) continue
      const keyBytes = this.stringSize(key, Infinity) + 1
      const bytes = this.size(value, SMALL)
      const entry = { key, value, keyBytes, bytes }
      const isLarge = bytes > SMALL && cuttable(value)
      least += (entries.length > 0 ? 1 : 0) + keyBytes + (isLarge ? 2 : bytes)
      entries.push(entry)
      if (isLarge) large.push(entry)
      // Entries from here on go whatever follows: no need to read them.
      if (least > budget) break
      await this.slice.step()
    }
    if (least <= budget) {
      // The large values cut down to a common size, smallest first, so what one leaves over goes
      // to the larger ones after it (measured no further than the whole room, and only when
      // there are several to order).
      let room = budget - least + 2 * large.length
      if (large.length > 1) for (const entry of large) entry.bytes = await this.sizeWithin(entry.value, room)
      const order = large.length > 1 ? [...large].sort((a, b) => a.bytes - b.bytes) : large
      for (const [index, entry] of order.entries()) {
        const cut = (await this.cut(entry.value, Math.floor(room / (order.length - index))))!
        changed ||= cut.value !== entry.value
        entry.value = cut.value
        entry.bytes = cut.bytes
        room -= cut.bytes
      }
    } else {
      // Not even 2 bytes each: every large value takes its emptiest form, and the last entries go.
      changed = true
      for (const entry of large) {
        entry.value = typeof entry.value === 'string' ? '' : Array.isArray(entry.value) ? [] : {}
        entry.bytes = 2
      }
    }
    let used = 2
    let kept = 0
    for (const entry of entries) {
      const next = used + (kept > 0 ? 1 : 0) + entry.keyBytes + entry.bytes
      if (next > budget) break
      used = next
      kept++
    }
    if (!changed && kept === entries.length) return { value: record, bytes: this.remember(record, used) }
    // Own data properties, whatever the keys are (`__proto__` included), as `Object.fromEntries` makes them.
    const value: Record<string, unknown> = {}
    for (let index = 0; index < kept; index++) {
      const { key, value: item } = entries[index]
      if (key === '__proto__')
        Object.defineProperty(value, key, { value: item, writable: true, enumerable: true, configurable: true })
      else value[key] = item
      await this.slice.step()
    }
    return { value, bytes: used }
  }

  /** The JSON size of a string, as `stringSize`; a length when every string is plain. */
  private stringSize(text: string, cap: number): number {
    return this.plain ? text.length + 2 : stringSize(text, cap)
  }

  private cutString(text: string, budget: number): Cut {
    return this.plain ? { value: text.slice(0, budget - 2), bytes: budget } : cutString(text, budget)
  }

  private keysOf(record: object): string[] {
    let keys = this.keyLists.get(record)
    if (!keys) this.keyLists.set(record, (keys = Object.keys(record)))
    return keys
  }

  private remember(value: object, size: number): number {
    this.exact.set(value, size)
    return size
  }

  private passed(value: object, size: number): number {
    this.above.set(value, Math.max(size, this.above.get(value) ?? 0))
    return size
  }
}

/**
 * JSON text (in pieces) without a `\` and all ASCII: no string in it holds anything escaped
 * (quotes, control characters, lone surrogates) or past ASCII, so each string takes its length
 * and quotes. Two native scans of each piece instead of one per string.
 */
async function allPlain(pieces: readonly string[], slice: TimeSlice): Promise<boolean> {
  for (const piece of pieces) {
    if (piece.includes('\\') || Buffer.byteLength(piece) !== piece.length) return false
    await slice.step()
  }
  return true
}

/** Printable ASCII but `"` and `\`: written as is, one byte each. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

/**
 * The JSON size of `text` (quotes included) when at most `cap`, otherwise a number above `cap`.
 * Every UTF-16 unit takes at least one byte, so a string longer than `cap` is not read at all.
 */
function stringSize(text: string, cap: number): number {
  if (text.length + 2 > cap || PLAIN.test(text)) return text.length + 2
  return Buffer.byteLength(JSON.stringify(text))
}

/** The longest prefix of `text` whose JSON fits in `budget` (at least 2), characters never split. */
function cutString(text: string, budget: number): Cut {
  const plain = text.slice(0, budget - 2)
  if (PLAIN.test(plain)) return { value: plain, bytes: plain.length + 2 }
  const { length, bytes } = prefixBytes(text, budget)
  return { value: text.slice(0, length), bytes }
}

/**
 * The JSON size of a prefix of `text` (quotes included) as `JSON.stringify` escapes it (`\"`,
 * `\\`, `\n` and friends, `\u00XX`, lone surrogates as `\uXXXX`), counted in one pass up to
 * `budget`: `length` is how many UTF-16 units fit (a surrogate pair is never split), `bytes` their size.
 */
function prefixBytes(text: string, budget: number): { length: number; bytes: number } {
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
