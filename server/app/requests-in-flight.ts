/**
 * How many HTTP requests (API, registry proxy, dashboard) this process is handling right now.
 * Background work that competes for the same event loop (webhook delivery) reads it to give way:
 * a request waits behind every continuation queued ahead of it, at each of its storage round trips.
 */
let inFlight = 0
const drainedListeners = new Set<() => void>()
/** The end of each request counted, by its response object (see `requestHandled`). */
const ends = new WeakMap<object, () => void>()

/**
 * Counts a request from now until the returned function is called (extra calls do nothing).
 * @example const done = requestStarted(event.node.res); try { await handle() } finally { done() }
 */
export function requestStarted(response?: object): () => void {
  inFlight++
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    inFlight--
    if (inFlight === 0) for (const listener of drainedListeners) listener()
  }
  if (response) ends.set(response, end)
  return end
}

/**
 * The handler's own work is over though the response goes on (a live event stream stays open
 * for as long as a page shows it): the request no longer counts.
 */
export function requestHandled(response: object): void {
  ends.get(response)?.()
}

export function requestsInFlight(): number {
  return inFlight
}

/**
 * Listeners subscribed now: one per delivery host's work limit, each removed by its unsubscribe (#30).
 * Per-request state is the counter and a WeakMap entry that goes with its response object.
 */
export function drainListeners(): number {
  return drainedListeners.size
}

/** Calls `listener` each time the count falls to zero; returns the unsubscribe. */
export function onRequestsDrained(listener: () => void): () => void {
  drainedListeners.add(listener)
  return () => drainedListeners.delete(listener)
}
