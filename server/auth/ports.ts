import type { Clock } from '../common/clock'
import type { TokenRepository } from '../../storage/repositories/tokens'

/** What authentication uses: the token store and the clock that judges expiry and last use. */
export interface AuthPorts {
  clock: Clock
  tokens: TokenRepository
}
