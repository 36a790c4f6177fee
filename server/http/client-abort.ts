import type { IncomingMessage } from 'node:http'

/**
 * A client that goes away in the middle of its body makes the body read fail with the request
 * stream's own error (`aborted`, ECONNRESET). That is no fault of the service: it is answered as
 * 499 "client closed request" (nginx's convention, what the access line already shows), neither
 * logged at error level nor counted as a 500. Only errors the request stream itself emitted are
 * recognised, so an upstream connection reset (the same message) stays what it is.
 */
const closedByClient = new WeakSet<object>()

/**
 * Remembers the error the request fails with if its client closes it before the body is complete.
 * @example watchClientAbort(event.node.req)
 */
export function watchClientAbort(req: IncomingMessage): void {
  // Gone before the handler started: the stream already holds the error its reads will throw.
  if (req.errored && !req.complete) return void closedByClient.add(req.errored)
  req.once('error', (error) => {
    if (!req.complete) closedByClient.add(error)
  })
}

/** Whether `error` is a watched request failing because its client went away mid-body. */
export function isClientAbort(error: unknown): boolean {
  return typeof error === 'object' && error !== null && closedByClient.has(error)
}
