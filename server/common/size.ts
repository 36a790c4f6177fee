/** Sizes as the operator writes them: `512KB`, `64MB`, `1GB`, or plain bytes; binary units (1 KB = 1024 bytes). */
const UNIT_BYTES = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 } as const

const SIZE_PATTERN = /^(\d+)\s*(b|kb|mb|gb)?$/i

/**
 * Parses a size into bytes; throws on anything else (and on 0).
 * @example parseSize('64MB') // 67108864
 */
export function parseSize(text: string): number {
  const match = SIZE_PATTERN.exec(text.trim())
  const bytes = match ? Number(match[1]) * UNIT_BYTES[(match[2] ?? 'b').toLowerCase() as keyof typeof UNIT_BYTES] : NaN
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new Error(`invalid size "${text}" (expected e.g. 512KB, 64MB, 1GB or a number of bytes)`)
  }
  return bytes
}
