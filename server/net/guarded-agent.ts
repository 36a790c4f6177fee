import { isIP } from 'node:net'
import type { Agent } from 'undici'
import { judgeAddress, type AddressPolicy } from './address-policy'
import { guardedLookup, type LookupAll } from './guarded-lookup'
import { loadUndici } from './undici'

/** The `code` of every connection the policy refuses (before, during or after connecting). */
export const ADDRESS_REFUSED = 'ERR_ADDRESS_REFUSED'

interface GuardedAgentOptions {
  /** Connections kept per origin. */
  connections?: number
  keepAliveTimeoutMs?: number
  connectTimeoutMs?: number
  lookupAll?: LookupAll
}

function refusedError(message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message)
  error.code = ADDRESS_REFUSED
  return error
}

/**
 * A pooled undici `Agent` that only connects where `policy` allows: a literal-IP host is judged
 * before connecting, a name through a guarded lookup (the address judged is the one used), and
 * every new socket once more on its remote address. undici is loaded with the first agent (undici.ts).
 */
export async function createGuardedAgent(policy: AddressPolicy, options: GuardedAgentOptions = {}): Promise<Agent> {
  const { Agent, buildConnector } = await loadUndici()
  const lookup = guardedLookup(policy, {
    errorCode: ADDRESS_REFUSED,
    message: (hostname, reason) => `${hostname} resolves to a refused address: ${reason}`,
    lookupAll: options.lookupAll,
  })
  const connector = buildConnector({ lookup, timeout: options.connectTimeoutMs ?? 10_000 })
  return new Agent({
    connections: options.connections ?? 32,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
    connect: (connectOptions, callback) => {
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '')
      if (isIP(host)) {
        const verdict = judgeAddress(host, policy)
        if (!verdict.allowed) return callback(refusedError(`address refused: ${verdict.reason}`), null)
      }
      connector(connectOptions, (error, socket) => {
        if (error) return callback(error, null)
        // Whatever resolved the name, the peer actually connected to is what counts.
        const remote = socket!.remoteAddress
        const verdict = remote ? judgeAddress(remote, policy) : { allowed: false as const, reason: 'no remote address' }
        if (!verdict.allowed) {
          socket!.destroy()
          return callback(refusedError(`connected address refused: ${verdict.reason}`), null)
        }
        callback(null, socket!)
      })
    },
  })
}
