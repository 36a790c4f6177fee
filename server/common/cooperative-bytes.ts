import { TimeSlice } from './time-slice'

/** Bytes are copied and decoded in pieces of this size. */
const PIECE = 1024 * 1024

/**
 * The parts (text as UTF-8, bytes as they are) in one buffer, copied a part at a time with pauses
 * between: a cache entry of 64 MB is built without holding the event loop.
 * @example (await joinCooperatively(['{"a":', Buffer.from('1}')])).toString() // '{"a":1}'
 */
export async function joinCooperatively(
  parts: readonly (string | Uint8Array)[],
  slice = new TimeSlice(),
): Promise<Buffer> {
  let total = 0
  for (const part of parts) total += typeof part === 'string' ? Buffer.byteLength(part) : part.byteLength
  const joined = Buffer.allocUnsafe(total)
  let offset = 0
  for (const part of parts) {
    if (typeof part === 'string') offset += joined.write(part, offset)
    else {
      joined.set(part, offset)
      offset += part.byteLength
    }
    await slice.step()
  }
  return joined
}

/**
 * UTF-8 bytes as text (as `TextDecoder` decodes them, a leading BOM dropped), a megabyte at a
 * time, in the pieces decoded: never joined (common/cooperative-json.ts parses pieces).
 * @example (await decodeCooperatively(Buffer.from('héllo'))).join('') // 'héllo'
 */
export async function decodeCooperatively(bytes: Uint8Array, slice = new TimeSlice()): Promise<string[]> {
  const decoder = new TextDecoder()
  const parts: string[] = []
  for (let at = 0; at < bytes.byteLength; at += PIECE) {
    parts.push(decoder.decode(bytes.subarray(at, at + PIECE), { stream: true }))
    await slice.step()
  }
  parts.push(decoder.decode())
  return parts
}
