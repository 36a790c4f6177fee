import { createHash } from 'node:crypto'

const ALGORITHMS = ['sha512', 'sha384', 'sha256', 'sha1'] as const

/**
 * Checks bytes against an SRI string (`sha512-<base64>`, possibly several space-separated
 * hashes: the strongest one present decides) or, failing that, npm's legacy hex `shasum`.
 * Returns null when there is nothing to check against.
 * @example verifyIntegrity(bytes, manifest.dist.integrity, manifest.dist.shasum) // true | false | null
 */
export function verifyIntegrity(bytes: Buffer, integrity?: string, shasum?: string): boolean | null {
  const hashes = new Map<string, string[]>()
  for (const part of (integrity ?? '').trim().split(/\s+/)) {
    const dash = part.indexOf('-')
    if (dash <= 0) continue
    const algorithm = part.slice(0, dash)
    const digest = part.slice(dash + 1).split('?')[0]
    hashes.set(algorithm, [...(hashes.get(algorithm) ?? []), digest])
  }
  for (const algorithm of ALGORITHMS) {
    const expected = hashes.get(algorithm)
    if (!expected) continue
    const actual = createHash(algorithm).update(bytes).digest('base64')
    return expected.includes(actual)
  }
  if (shasum) return createHash('sha1').update(bytes).digest('hex') === shasum.toLowerCase()
  return null
}

/** The artifact could be fetched but its bytes do not match the digest its metadata names. */
export class IntegrityMismatch extends Error {}
