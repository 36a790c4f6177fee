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
export interface StoredText {
  readonly text: string
  /** SHA-1 (hex) of `text`, once a compare-and-set needed it. */
  sha1?: string
}

const kept = new WeakMap<object, StoredText>()
const freezeKept = process.env.STORAGE_FREEZE_KEPT === '1'

/** Keeps `text` as the stored form of `value` (objects only: a primitive is cheap to serialise). */
export function keepStoredText(value: unknown, text: string): StoredText {
  const entry: StoredText = { text }
  if (typeof value === 'object' && value !== null) {
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

/** SHA-1 (hex) of an entry's text, computed once. */
export function sha1Of(entry: StoredText): string {
  return (entry.sha1 ??= createHash('sha1').update(entry.text).digest('hex'))
}

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return
  Object.freeze(value)
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child)
}
