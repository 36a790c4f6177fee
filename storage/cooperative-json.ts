import { TimeSlice } from './time-slice'

/**
 * JSON for documents of outside size (upstream metadata up to `UPSTREAM_MAX_BODY`, 64 MB by
 * default) without holding the event loop: `JSON.parse` of 64 MB alone takes it for 100 ms and
 * more. Text under `SMALL` characters goes to `JSON.parse` / `JSON.stringify` whole (the fast path:
 * normal packuments never leave it); a larger object or array is taken apart into its members,
 * each handled the same way, with a pause whenever the time slice is spent, and a larger string
 * is decoded or written in pieces. The results are those of `JSON.parse` and `JSON.stringify`
 * (test/common/cooperative-json.test.ts): same values, same text, a `SyntaxError` for what is not JSON.
 */

/** Values whose text is shorter than this are parsed or written natively, in one go. */
export const SMALL = 256 * 1024
/**
 * Runs of small members are parsed together up to this many characters: one `JSON.parse` of the
 * run and the members defined on the result take a few milliseconds (256 KB of 20-character
 * members, 12,000 keys, took 15-40 ms on a loaded machine).
 */
const RUN = 32 * 1024
/** A long string is decoded and written in pieces of about this many characters. */
const PIECE = 256 * 1024
/** Nested large containers past this depth: not a document anyone serves (and no stack for it). */
const MAX_LARGE_DEPTH = 100

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LETTER_U = 0x75
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

/** Defined, as JSON.parse does: a key `__proto__` stays a key. */
function define(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
  else record[key] = value
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
const isDelimiter = (c: number) => c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)

/**
 * JSON text whole, or in the pieces it was decoded in (an upstream answer chunk by chunk): pieces
 * are never joined, so a 64 MB answer never becomes one 64 MB string (joining it took 65-76 ms).
 */
export type JsonText = string | readonly string[]

/**
 * Text in pieces, read as one string: the piece last read is kept, so reading on (the parser's
 * way) costs a comparison more than reading one string; a slice joins at most the pieces it spans.
 */
class PieceText {
  readonly length: number
  private readonly pieces: string[]
  /** Where each piece starts in the whole text. */
  private readonly starts: number[] = []
  private piece = ''
  private pieceStart = 0
  private pieceEnd = 0

  constructor(pieces: readonly string[]) {
    this.pieces = pieces.filter((piece) => piece !== '')
    let length = 0
    for (const piece of this.pieces) {
      this.starts.push(length)
      length += piece.length
    }
    this.length = length
  }

  charCodeAt(at: number): number {
    if (at >= this.pieceStart && at < this.pieceEnd) return this.piece.charCodeAt(at - this.pieceStart)
    return this.seek(at) < 0 ? NaN : this.piece.charCodeAt(at - this.pieceStart)
  }

  /** Makes the piece holding `at` the current one; its index, or -1 past the text. */
  private seek(at: number): number {
    if (at < 0 || at >= this.length) return -1
    let low = 0
    let high = this.starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (this.starts[middle] <= at) low = middle
      else high = middle - 1
    }
    this.piece = this.pieces[low]
    this.pieceStart = this.starts[low]
    this.pieceEnd = this.pieceStart + this.piece.length
    return low
  }

  slice(from: number, to: number): string {
    to = Math.min(to, this.length)
    if (from >= to) return ''
    if (from >= this.pieceStart && to <= this.pieceEnd)
      return this.piece.slice(from - this.pieceStart, to - this.pieceStart)
    let index = this.seek(from)
    let text = ''
    for (let at = from; at < to; index++) {
      const start = this.starts[index]
      const piece = this.pieces[index]
      text += piece.slice(at - start, to - start)
      at = start + piece.length
    }
    return text
  }
}

/** The length of `text`, whole or in pieces. */
const lengthOf = (text: JsonText): number =>
  typeof text === 'string' ? text.length : text.reduce((sum, piece) => sum + piece.length, 0)

/**
 * Object members a parse leaves out, as a `JSON.parse` reviver returning `undefined` for them would
 * (never an array's item, never a member named ''): how unstorage's `destr` drops prototype keys
 * (storage/stored-json.ts).
 */
export type OmitMember = (key: string, value: unknown) => boolean

/**
 * `omit` as a `JSON.parse` reviver. The key '' is never asked about: it is also how `JSON.parse`
 * names the root, and a value parsed on its own here is a root there.
 */
function reviverOf(omit: OmitMember) {
  return function (this: unknown, key: string, value: unknown): unknown {
    return key !== '' && !Array.isArray(this) && omit(key, value) ? undefined : value
  }
}

/**
 * A container with more members than the caller allows (`maxMembers`): walking a record of
 * millions of keys takes one key listing the parser cannot slice, so the document is refused.
 */
export class TooManyMembers extends Error {
  constructor(readonly limit: number) {
    super(`a JSON object or array holds more than ${limit} members`)
  }
}

/**
 * What a parse takes: `maxMembers` per object or array (unset: no bound), and `omit`, the object
 * members it leaves out.
 */
export interface JsonOptions {
  maxMembers?: number
  omit?: OmitMember
}

/**
 * `JSON.parse(text)`, taking turns with the rest of the process on large text. `text` may be in
 * pieces (as decoded); the result is that of `JSON.parse` of the pieces joined (with the reviver
 * `omit` makes, when given). With `maxMembers`, an object or array taken apart (text of `SMALL`
 * or more) with more members throws `TooManyMembers` as soon as the count passes it; text under
 * `SMALL` cannot hold more than about `SMALL / 2` members and is not counted.
 * @example await parseJsonCooperatively(await upstreamPieces(response)) // as JSON.parse, in slices of 5 ms
 */
export async function parseJsonCooperatively(
  text: JsonText,
  slice = new TimeSlice(),
  options: JsonOptions = {},
): Promise<unknown> {
  const reviver = options.omit && reviverOf(options.omit)
  if (lengthOf(text) < SMALL) return JSON.parse(typeof text === 'string' ? text : text.join(''), reviver)
  const parser = new Parser(
    typeof text === 'string' ? text : new PieceText(text),
    slice,
    options.maxMembers ?? Infinity,
    options.omit,
    reviver,
  )
  const [value, end] = await parser.at(0, 0)
  if (parser.skipSpace(end) !== parser.length)
    throw new SyntaxError(`Unexpected non-whitespace character after JSON at position ${end}`)
  return value
}

class Parser {
  constructor(
    private readonly text: string | PieceText,
    private readonly slice: TimeSlice,
    private readonly maxMembers: number,
    private readonly omit?: OmitMember,
    private readonly reviver?: (this: unknown, key: string, value: unknown) => unknown,
  ) {}

  /** `count` members so far in one container: past `maxMembers`, the document is refused. */
  private counted(count: number): number {
    if (count > this.maxMembers) throw new TooManyMembers(this.maxMembers)
    return count
  }

  get length(): number {
    return this.text.length
  }

  skipSpace(at: number): number {
    while (isSpace(this.text.charCodeAt(at))) at++
    return at
  }

  /** The value whose text starts at `at` (after white space), and where its text ends. */
  /**
   * `large`: the caller's scan already found that the value does not end within `SMALL` characters
   * (the scan is not done again: 256 KB read twice per large member).
   */
  async at(at: number, depth: number, large = false): Promise<[unknown, number]> {
    const start = this.skipSpace(at)
    const end = large ? -1 : this.endWithin(start, start + SMALL)
    if (end >= 0) return [JSON.parse(this.text.slice(start, end), this.reviver), end]
    if (depth >= MAX_LARGE_DEPTH) throw new SyntaxError(`JSON nested too deep at position ${start}`)
    await this.slice.step()
    const first = this.text.charCodeAt(start)
    if (first === OPEN_BRACE) return this.object(start, depth + 1)
    if (first === OPEN_BRACKET) return this.array(start, depth + 1)
    if (first === QUOTE) return this.string(start)
    return this.primitive(start)
  }

  /**
   * Where the value starting at `start` ends, when that is before `limit`; -1 otherwise. Strings
   * and nesting are followed, nothing is checked: `JSON.parse` of the text found does that.
   */
  private endWithin(start: number, limit: number): number {
    const text = this.text
    const stop = Math.min(limit, text.length)
    const first = text.charCodeAt(start)
    let i = start
    if (first !== QUOTE && first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      while (i < stop && !isDelimiter(text.charCodeAt(i))) i++
      return i < stop || stop === text.length ? i : -1
    }
    let depth = 0
    while (i < stop) {
      const c = text.charCodeAt(i)
      if (c === QUOTE) {
        i++
        for (;;) {
          if (i >= stop) return -1
          const d = text.charCodeAt(i)
          if (d === QUOTE) break
          i += d === BACKSLASH ? 2 : 1
        }
        if (depth === 0) return i + 1
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        // Unbalanced text ends here; JSON.parse says what is wrong with it.
        if (--depth <= 0) return i + 1
      }
      i++
    }
    return -1
  }

  private unexpected(at: number): SyntaxError {
    const found = at < this.text.length ? `token '${this.text.slice(at, at + 1)}'` : 'end of JSON input'
    return new SyntaxError(`Unexpected ${found} at position ${at}`)
  }

  /**
   * A large object: runs of small members are parsed together (one `JSON.parse` per `RUN`
   * characters, so a million tiny members cost no more than one large one), a large member on its own.
   */
  private async object(start: number, depth: number): Promise<[unknown, number]> {
    const text = this.text
    const result: Record<string, unknown> = {}
    // Members read, repeated keys included (an upper bound of the keys held; counted before they are defined).
    let members = 0
    const flush = (from: number, to: number) => {
      if (from < 0) return
      const part = JSON.parse(`{${text.slice(from, to)}}`, this.reviver) as Record<string, unknown>
      const keys = Object.keys(part)
      members = this.counted(members + keys.length)
      for (const key of keys) define(result, key, part[key])
    }
    let i = this.skipSpace(start + 1)
    if (text.charCodeAt(i) === CLOSE_BRACE) return [result, i + 1]
    let run = -1
    let runEnd = -1
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) throw this.unexpected(i)
      const keyEnd = this.endWithin(i, i + SMALL)
      const colon = keyEnd < 0 ? -1 : this.skipSpace(keyEnd)
      const valueStart = colon < 0 ? -1 : this.skipSpace(colon + 1)
      const valueEnd = valueStart < 0 ? -1 : this.endWithin(valueStart, valueStart + SMALL)
      let end: number
      if (valueEnd >= 0 && text.charCodeAt(colon) === COLON) {
        if (run < 0) run = i
        runEnd = end = valueEnd
        if (runEnd - run >= RUN) {
          flush(run, runEnd)
          run = -1
          await this.slice.step()
        }
      } else {
        flush(run, runEnd)
        run = -1
        const [key, afterKey] = await this.at(i, depth)
        const at = this.skipSpace(afterKey)
        if (text.charCodeAt(at) !== COLON) throw this.unexpected(at)
        // The value was scanned from `valueStart` when the key and colon were found where read above.
        const large = at === colon && valueStart >= 0 && valueEnd < 0
        const [value, afterValue] = await this.at(at + 1, depth, large)
        members = this.counted(members + 1)
        if (key === '' || !this.omit?.(key as string, value)) define(result, key as string, value)
        end = afterValue
        await this.slice.step()
      }
      i = this.skipSpace(end)
      const c = text.charCodeAt(i)
      if (c === CLOSE_BRACE) {
        flush(run, runEnd)
        return [result, i + 1]
      }
      if (c !== COMMA) throw this.unexpected(i)
      i = this.skipSpace(i + 1)
    }
  }

  /** A large array: runs of small items parsed together, as for an object. */
  private async array(start: number, depth: number): Promise<[unknown, number]> {
    const text = this.text
    const result: unknown[] = []
    const flush = (from: number, to: number) => {
      if (from < 0) return
      const items = JSON.parse(`[${text.slice(from, to)}]`, this.reviver) as unknown[]
      this.counted(result.length + items.length)
      for (const item of items) result.push(item)
    }
    let i = this.skipSpace(start + 1)
    if (text.charCodeAt(i) === CLOSE_BRACKET) return [result, i + 1]
    let run = -1
    let runEnd = -1
    for (;;) {
      const itemEnd = this.endWithin(i, i + SMALL)
      let end: number
      if (itemEnd >= 0) {
        if (run < 0) run = i
        runEnd = end = itemEnd
        if (runEnd - run >= RUN) {
          flush(run, runEnd)
          run = -1
          await this.slice.step()
        }
      } else {
        flush(run, runEnd)
        run = -1
        const [value, afterValue] = await this.at(i, depth, true)
        this.counted(result.length + 1)
        result.push(value)
        end = afterValue
        await this.slice.step()
      }
      i = this.skipSpace(end)
      const c = text.charCodeAt(i)
      if (c === CLOSE_BRACKET) {
        flush(run, runEnd)
        return [result, i + 1]
      }
      if (c !== COMMA) throw this.unexpected(i)
      i = this.skipSpace(i + 1)
    }
  }

  /** A long string, decoded a piece at a time; a piece never ends inside an escape. */
  private async string(start: number): Promise<[string, number]> {
    const text = this.text
    let value = ''
    let piece = start + 1
    let i = piece
    for (;;) {
      if (i >= text.length) throw this.unexpected(text.length)
      const c = text.charCodeAt(i)
      if (c === QUOTE) break
      if (c === BACKSLASH) i += text.charCodeAt(i + 1) === LETTER_U ? 6 : 2
      else i++
      if (i - piece >= PIECE) {
        value += JSON.parse(`"${text.slice(piece, i)}"`) as string
        piece = i
        await this.slice.step()
      }
    }
    value += JSON.parse(`"${text.slice(piece, i)}"`) as string
    return [value, i + 1]
  }

  /**
   * A number (or garbage) of `SMALL` characters or more: refused. No registry writes one; judged
   * whole it would be one string of outside size (where `JSON.parse` would read a number of
   * 300,000 digits as a number, this says it is too long).
   */
  private primitive(start: number): Promise<[unknown, number]> {
    throw new SyntaxError(`JSON value of ${SMALL} characters or more at position ${start} is not a string`)
  }
}

/** What `JSON.stringify` leaves out of an object (and writes as `null` in an array). */
const isOmitted = (value: unknown): boolean =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol'

const hasToJson = (value: object): boolean => typeof (value as { toJSON?: unknown }).toJSON === 'function'

/** Size units a value may take to be written natively in one go (a node counts 8, a string its length). */
const NATIVE_BUDGET = 64 * 1024

/**
 * The size units of `value` when at most `budget`, else -1: a walk that stops as soon as it has
 * counted past `budget`, so asking about a large value costs no more than about a small one.
 */
function unitsWithin(value: unknown, budget: number, keyLists?: WeakMap<object, string[]>): number {
  let left = budget
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    left -= 8
    if (typeof item === 'string') left -= item.length
    else if (item !== null && typeof item === 'object') {
      if (Array.isArray(item)) {
        if (item.length * 8 > left) return -1
        for (const element of item) stack.push(element)
      } else {
        // One key listing; a large object's is kept for the writer, which lists it next, and
        // for the next question about it (listing 60,000 keys takes about 9 ms).
        const keys = keyLists?.get(item) ?? Object.keys(item)
        if (keys.length * 8 > left) {
          keyLists?.set(item, keys)
          return -1
        }
        for (const key of keys) {
          left -= key.length + 8
          stack.push((item as Record<string, unknown>)[key])
        }
      }
    }
    if (left < 0) return -1
  }
  return budget - left
}

const isSmall = (value: unknown, keyLists?: WeakMap<object, string[]>): boolean =>
  unitsWithin(value, NATIVE_BUDGET, keyLists) >= 0

/**
 * `JSON.stringify(value)` (`null` for `undefined`) when the value is small enough to be written in
 * one go, as `stringifyCooperatively` would write it; null when it is not. Asking walks the value
 * (listing a large object's keys, kept in `keyLists`): call it on a slice with time left.
 * @example stringifyIfSmall({ a: 1 }) // '{"a":1}'
 */
export function stringifyIfSmall(value: unknown, keyLists?: WeakMap<object, string[]>): string | null {
  return isSmall(value, keyLists) ? (JSON.stringify(value) ?? 'null') : null
}

/** Serialised JSON in pieces of about `SMALL` characters (a response or a cache entry is written piece by piece). */
export interface JsonPieces {
  pieces: string[]
  /** The UTF-8 size of all pieces together. */
  bytes: number
}

/**
 * `JSON.stringify(value)` as pieces, taking turns with the rest of the process on a large value.
 * The pieces joined are exactly `JSON.stringify(value)` (a long string is cut between characters,
 * never inside a surrogate pair). `undefined` at the top is written as `null`. `keyLists` keeps the
 * key lists of large objects (listing 60,000 keys takes about 9 ms): a caller walking the same
 * value again may share it.
 * @example (await stringifyCooperatively(doc)).pieces.join('') === JSON.stringify(doc) // true
 */
export async function stringifyCooperatively(
  value: unknown,
  slice = new TimeSlice(),
  keyLists = new WeakMap<object, string[]>(),
): Promise<JsonPieces> {
  const writer = new Writer(slice, keyLists)
  // Asking whether a record is small lists its keys (9-20 ms for 47,500): not on a caller's spent slice.
  await slice.step()
  if (isSmall(value, writer.keyLists)) {
    const text = JSON.stringify(value) ?? 'null'
    return { pieces: [text], bytes: Buffer.byteLength(text) }
  }
  await writer.write(value)
  return writer.finish()
}

class Writer {
  private readonly pieces: string[] = []
  private pending = ''
  private bytes = 0

  constructor(
    private readonly slice: TimeSlice,
    readonly keyLists: WeakMap<object, string[]>,
  ) {}

  private push(text: string): void {
    this.pending += text
    if (this.pending.length >= SMALL) this.flush()
  }

  private flush(): void {
    if (this.pending === '') return
    this.pieces.push(this.pending)
    this.bytes += Buffer.byteLength(this.pending)
    this.pending = ''
  }

  finish(): JsonPieces {
    this.flush()
    return { pieces: this.pieces, bytes: this.bytes }
  }

  async write(value: unknown): Promise<void> {
    if (typeof value === 'string' && value.length > PIECE) return this.string(value)
    if (value === null || typeof value !== 'object' || hasToJson(value) || isSmall(value, this.keyLists)) {
      this.push(JSON.stringify(value) ?? 'null')
      return
    }
    return Array.isArray(value) ? this.array(value) : this.object(value as Record<string, unknown>)
  }

  /** Runs of small items are written together (one `JSON.stringify` per `NATIVE_BUDGET`), a large one alone. */
  private async array(items: readonly unknown[]): Promise<void> {
    this.push('[')
    let run: unknown[] = []
    let units = 0
    let written = 0
    const flush = () => {
      if (run.length === 0) return
      this.push(`${written > 0 ? ',' : ''}${JSON.stringify(run).slice(1, -1)}`)
      written += run.length
      run = []
      units = 0
    }
    for (const item of items) {
      const size = unitsWithin(item, NATIVE_BUDGET, this.keyLists)
      if (size >= 0) {
        // An omitted value (`undefined`, a function) is written `null` in an array: stringify does that.
        run.push(item)
        units += size
        if (units < NATIVE_BUDGET) continue
        flush()
      } else {
        flush()
        if (written > 0) this.push(',')
        await this.write(item)
        written++
      }
      await this.slice.step()
    }
    flush()
    this.push(']')
  }

  /** As `array`: runs of small entries together, in an object of their own. */
  private async object(record: Record<string, unknown>): Promise<void> {
    this.push('{')
    let run: Record<string, unknown> = {}
    let units = 0
    let pending = 0
    let written = 0
    const flush = () => {
      if (pending === 0) return
      const text = JSON.stringify(run).slice(1, -1)
      // Every entry of the run may have been omitted (undefined values): nothing to write then.
      if (text !== '') {
        this.push(`${written > 0 ? ',' : ''}${text}`)
        written++
      }
      run = {}
      units = 0
      pending = 0
    }
    for (const key of this.keyLists.get(record) ?? Object.keys(record)) {
      const item = record[key]
      if (isOmitted(item)) continue
      const size = unitsWithin(item, NATIVE_BUDGET, this.keyLists)
      if (size >= 0) {
        define(run, key, item)
        units += size + key.length
        pending++
        if (units < NATIVE_BUDGET) continue
        flush()
      } else {
        flush()
        this.push(`${written > 0 ? ',' : ''}${JSON.stringify(key)}:`)
        written++
        await this.write(item)
      }
      await this.slice.step()
    }
    flush()
    this.push('}')
  }

  private async string(text: string): Promise<void> {
    this.push('"')
    for (let at = 0; at < text.length;) {
      let end = Math.min(at + PIECE, text.length)
      // A surrogate pair stays whole (apart, each half would be written as an escape).
      const last = text.charCodeAt(end - 1)
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
      this.push(JSON.stringify(text.slice(at, end)).slice(1, -1))
      at = end
      await this.slice.step()
    }
    this.push('"')
  }
}
