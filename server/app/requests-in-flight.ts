/**
 * How many HTTP requests (API, registry proxy, dashboard) this process is handling right now.
 * Background work that competes for the same event loop (webhook delivery) reads it to give way:
 * a request waits behind every continuation queued ahead of it, at each of its storage round trips.
 */
let inFlight = 0
const drainedListeners = new Set<() => void>()

/**
 * Counts a request from now until the returned function is called (extra calls do nothing).
 * @example const done = requestStarted(); try { await handle() } finally { done() }
 */
export function requestStarted(): () => void {
  inFlight++
  let ended = false
  return () => {
    if (ended) return
    ended = true
    inFlight--
    if (inFlight === 0) for (const listener of drainedListeners) listener()
  }
}

export function requestsInFlight(): number {
  return inFlight
}

/** Calls `listener` each time the count falls to zero; returns the unsubscribe. */
export function onRequestsDrained(listener: () => void): () => void {
  drainedListeners.add(listener)
  return () => drainedListeners.delete(listener)
}
