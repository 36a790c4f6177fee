import { randomBytes } from 'node:crypto'
import { z } from 'zod'

/** Ids supplied by clients. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export const ClientId = z.string().regex(CLIENT_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$')

type IdPrefix = 'evt' | 'whdel' | 'wh' | 'exr' | 'tok' | 'team' | 'ls' | 'req' | 'svc' | 'log'

/**
 * A generated id with its type prefix; time-ordered (base36 millis first) so that
 * lists sorted by id are sorted by creation.
 * @example newId('evt') // 'evt-lz3k1q2a-9f8c7b6a5d4e3f21'
 */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}-${now.toString(36).padStart(9, '0')}${randomHex8()}`
}

// Random bytes drawn in blocks: one id per request made randomBytes() a visible cost.
const POOL_SIZE = 8 * 512
let pool = randomBytes(POOL_SIZE)
let offset = 0

function randomHex8(): string {
  if (offset + 8 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  const hex = pool.toString('hex', offset, offset + 8)
  offset += 8
  return hex
}
