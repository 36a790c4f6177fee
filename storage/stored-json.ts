import { destr } from 'destr'
import { parseJsonCooperatively, SMALL, type OmitMember } from './cooperative-json'
import { TimeSlice } from './time-slice'

/**
 * Stored values read back without holding the event loop: a firewall, its history entry and its
 * event are up to 1 MiB of outside input each (CONTRACT.md 8), and `JSON.parse` of one took 20-75 ms
 * in one go on a loaded 2-core machine. Text under `SMALL` characters is parsed natively, in one go.
 */

// destr 2.0.5's guards, word for word: a document they match is parsed with prototype keys left out.
const suspectProtoRx =
  /"(?:_|\\u0{2}5[Ff]){2}(?:p|\\u0{2}70)(?:r|\\u0{2}72)(?:o|\\u0{2}6[Ff])(?:t|\\u0{2}74)(?:o|\\u0{2}6[Ff])(?:_|\\u0{2}5[Ff]){2}"\s*:/
const suspectConstructorRx =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/
const CONTAINER = /^\s*[[{]/

/** What destr's reviver leaves out (and says so): `__proto__`, and a `constructor` holding a prototype. */
const prototypeKey: OmitMember = (key, value) => {
  const dropped =
    key === '__proto__' ||
    (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)
  if (dropped) console.warn(`[destr] Dropping "${key}" key to prevent prototype pollution.`)
  return dropped
}

/**
 * What unstorage's `getItem` makes of a stored text (`destr`, not strict), taking turns on a large
 * JSON object or array. Anything else, and a large text the cooperative parser refuses (not JSON,
 * or JSON it does not take apart), goes to `destr` itself: the same value in every case.
 * @example await readStoredText('{"a":1}') // { a: 1 }, as destr('{"a":1}')
 */
export async function readStoredText(text: string, slice = new TimeSlice()): Promise<unknown> {
  if (text.length < SMALL || !CONTAINER.test(text)) return destr(text)
  const suspect = suspectProtoRx.test(text) || suspectConstructorRx.test(text)
  try {
    return await parseJsonCooperatively(text, slice, suspect ? { omit: prototypeKey } : {})
  } catch {
    return destr(text)
  }
}

/**
 * `JSON.parse(text)` of a stored value (the Redis backend's raw reads), taking turns on large text:
 * the same value, or the same SyntaxError, as `JSON.parse`.
 */
export async function parseStoredJson(text: string, slice = new TimeSlice()): Promise<unknown> {
  if (text.length < SMALL) return JSON.parse(text)
  try {
    return await parseJsonCooperatively(text, slice)
  } catch {
    // JSON the cooperative parser does not take apart (a bare value of 256 KB, 100 levels of large containers).
    return JSON.parse(text)
  }
}
