import { getRequestIP, type H3Event } from 'h3'

/**
 * The client's address under the one `TRUST_PROXY` policy: `X-Forwarded-For` is believed only
 * when the operator says a proxy sets it; otherwise a client could pick any address and walk
 * around the per-address limits or forge the address written into audit and decision events.
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what dual-stack sockets report) is shown as IPv4.
 */
export function clientAddress(event: H3Event): string | undefined {
  const trusted = process.env.TRUST_PROXY === 'true'
  const address = getRequestIP(event, { xForwardedFor: trusted }) ?? event.node.req.socket.remoteAddress
  return address?.trim().replace(/^::ffff:(?=\d+\.)/, '')
}
