import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns'
import { judgeAddress, type AddressPolicy } from './address-policy'

/** `dns.lookup` with `all: true`, injectable for tests. */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>

export const systemLookupAll: LookupAll = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  )

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

interface GuardOptions {
  /** The `code` of the error a refused name fails with. */
  errorCode: string
  /** Builds the error message from the name and the refusal reason. */
  message?: (hostname: string, reason: string) => string
  lookupAll?: LookupAll
}

/**
 * A `lookup` for `net.connect`/`http.request` that refuses a name when any address it resolves
 * to is refused by `policy`, so the address judged is the address connected to (defeats DNS
 * rebinding between a check and its use).
 */
export function guardedLookup(policy: AddressPolicy, options: GuardOptions) {
  const lookupAll = options.lookupAll ?? systemLookupAll
  const message = options.message ?? ((hostname: string, reason: string) => `${hostname} resolves to ${reason}`)
  return (
    hostname: string,
    lookupOptions: LookupOptions | LookupAllOptions | number,
    callback: LookupCallback,
  ): void => {
    const wantsAll = typeof lookupOptions === 'object' && lookupOptions !== null && lookupOptions.all === true
    lookupAll(hostname).then(
      (addresses) => {
        const refusal = addresses
          .map((entry) => judgeAddress(entry.address, policy))
          .find((verdict) => !verdict.allowed)
        if (refusal || addresses.length === 0) {
          const reason = refusal && !refusal.allowed ? refusal.reason : 'no address'
          const error: NodeJS.ErrnoException = new Error(message(hostname, reason))
          error.code = options.errorCode
          return callback(error, '')
        }
        if (wantsAll) return callback(null, addresses)
        callback(null, addresses[0].address, addresses[0].family)
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    )
  }
}
