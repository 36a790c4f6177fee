import * as crypto from 'node:crypto'
import { createHash, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'

type TokenKind = 'personal' | 'service'

const PREFIX: Record<TokenKind, string> = { personal: 'fwp_', service: 'fws_' }
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/**
 * New token material: the kind's prefix and 43 base62 characters (about 256 random bits,
 * well above the 160 the contract asks for).
 * @example generateToken('personal') // 'fwp_3xQ...'
 */
export function generateToken(kind: TokenKind): string {
  const bytes = randomBytes(43)
  let body = ''
  // Rejection-free mapping: 256 % 62 bias is negligible at this length, and we keep 43 chars.
  for (const byte of bytes) body += ALPHABET[byte % ALPHABET.length]
  return PREFIX[kind] + body
}

/**
 * SHA-256 in hex. The one-shot `crypto.hash` (Node 20.12) takes well under half the time of a
 * `Hash` object for a token (#27: every API call hashes the token it presents); older Node 20
 * releases lack it.
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text).digest('hex')

/** The only form in which token material is stored. */
export function hashToken(material: string): string {
  return sha256Hex(material)
}

/** Identifiers of the tokens in use, so a call does not hash twice (#27); bounded like the touch gate. */
const identifiers = new LRUCache<string, string>({ max: 10_000 })

/** Public, hash-derived identifier of a token (never its material): for events and audit. */
export function tokenIdentifier(hash: string): string {
  let identifier = identifiers.get(hash)
  if (identifier === undefined) {
    identifier = `tid_${createHash('sha256').update(`identifier:${hash}`).digest('hex').slice(0, 24)}`
    identifiers.set(hash, identifier)
  }
  return identifier
}

/** A short, non-secret prefix shown in lists so owners recognise their tokens. */
export function displayPrefix(material: string): string {
  return material.slice(0, 8)
}

interface PresentedToken {
  material: string
  interaction?: string
}

/** Splits the optional, non-secret `~interactionId` suffix. */
export function splitInteraction(presented: string): PresentedToken {
  const tilde = presented.indexOf('~')
  if (tilde < 0) return { material: presented }
  const interaction = presented.slice(tilde + 1)
  return { material: presented.slice(0, tilde), interaction: interaction || undefined }
}

/**
 * Whether a presented string can be token material at all (a cheap refusal before any
 * lookup). Generated tokens are `fwp_`/`fws_` + base62, but an operator's BOOTSTRAP_TOKEN
 * may be any printable string, so only the character set and length are checked here.
 */
export function isPlausibleToken(material: string): boolean {
  return /^[\x21-\x7e]{8,512}$/.test(material)
}
