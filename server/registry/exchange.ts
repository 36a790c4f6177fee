import type { IncomingHttpHeaders } from 'node:http'

/** The part of an HTTP response a registry protocol module writes (Node's ServerResponse fits). */
export interface RegistryResponse {
  statusCode: number
  statusMessage: string
  readonly headersSent: boolean
  setHeader(name: string, value: string | number | readonly string[]): unknown
  end(body?: Buffer | string): unknown
  /** A piece of a large answer; false when the client has not taken what was written yet ('drain' follows). */
  write(chunk: string): boolean
  once(event: 'drain' | 'close', listener: () => void): unknown
  off(event: 'drain' | 'close', listener: () => void): unknown
}

/**
 * One registry request as protocol modules see it: method, headers and the body stream in,
 * a response out. The edge (handler.ts) builds it; modules never touch the H3 event.
 */
export interface RegistryExchange {
  method: string
  headers: IncomingHttpHeaders
  /** The request body, read at most once (request-body.ts bounds it). */
  body: AsyncIterable<Uint8Array>
  response: RegistryResponse
}
