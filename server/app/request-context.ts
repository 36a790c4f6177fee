import { AsyncLocalStorage } from 'node:async_hooks'

/** What every log line of one request shares. Mutable: the router fills `route` once matched. */
export interface RequestContext {
  requestId: string
  /** The route template (`/v1/{ns}/config/{fw}`), never a raw path with ids. */
  route?: string
  /** Set once the response closed: timers and actors started by the request log without its id afterwards. */
  ended?: boolean
  /** Ends the request's count in `Services.requests` (set by the composition root, 00.services.ts). */
  stopCounting?: () => void
}

// One store for the process; the observability plugin enters it around every request.
const storage = new AsyncLocalStorage<RequestContext>()

/**
 * Contexts entered and not ended yet. When the last one ends, the store is disabled until the
 * next request enters one: on Node 20 an enabled AsyncLocalStorage runs promise hooks for every
 * promise of the process, and webhook delivery between requests paid for them (#27: about 7 % of
 * the CPU and 6 % of the allocation of a delivery at light load) for a context nobody reads.
 */
const live = new Set<RequestContext>()

/**
 * Runs `fn` (and everything it awaits) inside a request context, live until `endRequestContext`.
 * @example runWithRequestContext({ requestId: newId('req') }, () => handler(event))
 */
export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  if (!context.ended) live.add(context)
  return storage.run(context, fn)
}

/**
 * The request's response closed: its context ends (log lines after it carry no request id),
 * and with no request left the store is disabled (see `live`).
 */
export function endRequestContext(context: RequestContext): void {
  context.ended = true
  if (!live.delete(context)) return
  if (live.size === 0) storage.disable()
}

/** The current request id, when running inside a request that has not ended yet. */
export function currentRequestId(): string | undefined {
  const context = storage.getStore()
  return context && !context.ended ? context.requestId : undefined
}

/**
 * Names the route template of the current request (the label of its metrics and access line).
 * @example setRequestRoute('/registry/{ns}/{fw}/{package}')
 */
export function setRequestRoute(template: string): void {
  const context = storage.getStore()
  if (context) context.route = template
}

/** Says how the current request's count ends (the composition root counts every request). */
export function setRequestCountEnd(stop: () => void): void {
  const context = storage.getStore()
  if (context) context.stopCounting = stop
}

/**
 * The current request was refused for lack of a valid token: webhook delivery need not give way
 * to it (server/observability/requests-in-flight.ts), so a flood of bad tokens cannot slow delivery down.
 */
export function requestRefusedUnauthenticated(): void {
  storage.getStore()?.stopCounting?.()
}
