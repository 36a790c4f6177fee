import { createHash } from 'node:crypto'

/**
 * The text a stored value has in Redis, kept by the value's identity: what a transaction read it
 * from or wrote it as. A transaction that assumes a value (`TxOptions.assume`) compares storage
 * against that text; without this it serialised the value again, and hashed it again when long,
 * on every write (a webhook's 4 KB delivery index and its cursor on every attempt, a firewall's
 * document on every edit).
 *
 * Values handed to or read by a transaction are never changed afterwards (repositories build new
 * values instead); were one changed, its kept text would no longer describe it, and a transaction
 * assuming it would run its body on values storage does not hold. `STORAGE_FREEZE_KEPT=1` (the
 * test suite's servers) freezes each value kept here, so a change throws where it is made.
 */

/** Texts up to this long are compared as they are, longer ones by their SHA-1 (redis-scripts.ts, COMPARE_AND_SET). */
const COMPARED_AS_IS = 64
/**
 * Longer texts are not kept (a value assumed later is serialised again, as before): a kept text
 * lives as long as its value, and a 1 MiB firewall held by a cache would have held its text too.
 */
const KEPT_AT_MOST = 16 * 1024

/** One stored text, as a compare-and-set checks it. */
export class StoredText {
  private sha1: string | null = null

  constructor(private text: string | null) {}

  /**
   * How COMPARE_AND_SET checks that a key holds this text: `[1, text]` when short, else
   * `[2, sha1hex]`, computed once (the text is let go then: only the hash is needed afterwards).
   */
  check(): [1 | 2, string] {
    if (this.sha1 !== null) return [2, this.sha1]
    const text = this.text!
    if (text.length <= COMPARED_AS_IS) return [1, text]
    this.sha1 = createHash('sha1').update(text).digest('hex')
    this.text = null
    return [2, this.sha1]
  }
}

const kept = new WeakMap<object, StoredText>()
const freezeKept = process.env.STORAGE_FREEZE_KEPT === '1'

/** `text` as the stored form of `value`, kept for an object of at most KEPT_AT_MOST characters. */
export function keepStoredText(value: unknown, text: string): StoredText {
  const entry = new StoredText(text)
  if (typeof value === 'object' && value !== null && text.length <= KEPT_AT_MOST) {
    kept.set(value, entry)
    if (freezeKept) deepFreeze(value)
  }
  return entry
}

/** The stored form of `value`: the kept text, or `JSON.stringify` (then kept). */
export function storedTextOf(value: unknown): StoredText {
  const known = typeof value === 'object' && value !== null ? kept.get(value) : undefined
  return known ?? keepStoredText(value, JSON.stringify(value))
}

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return
  Object.freeze(value)
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child)
}
