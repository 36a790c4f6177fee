/**
 * How many HTTP requests (API, registry proxy, dashboard) this process is handling right now.
 * Background work that competes for the same event loop (webhook delivery) reads it to give way:
 * a request waits behind every continuation queued ahead of it, at each of its storage round trips.
 * One instance per process, built by the composition root (`Services.requests`), which counts
 * every request the server handles (server/plugins/00.services.ts).
 */
export class RequestsInFlight {
  private inFlight = 0
  private readonly drainedListeners = new Set<() => void>()
  /** The end of each request counted, by its response object (see `handled`). */
  private readonly ends = new WeakMap<object, () => void>()

  /**
   * Counts a request from now until the returned function is called (extra calls do nothing).
   * @example const done = requests.started(event.node.res); try { await handle() } finally { done() }
   */
  started(response?: object): () => void {
    this.inFlight++
    let ended = false
    const end = () => {
      if (ended) return
      ended = true
      this.inFlight--
      if (this.inFlight === 0) for (const listener of this.drainedListeners) listener()
    }
    if (response) this.ends.set(response, end)
    return end
  }

  /**
   * The handler's own work is over though the response goes on (a live event stream stays open
   * for as long as a page shows it): the request no longer counts.
   */
  handled(response: object): void {
    this.ends.get(response)?.()
  }

  count(): number {
    return this.inFlight
  }

  /**
   * Listeners subscribed now: one per delivery host's work limit, each removed by its unsubscribe (#30).
   * Per-request state is the counter and a WeakMap entry that goes with its response object.
   */
  drainListeners(): number {
    return this.drainedListeners.size
  }

  /** Calls `listener` each time the count falls to zero; returns the unsubscribe. */
  onDrained(listener: () => void): () => void {
    this.drainedListeners.add(listener)
    return () => this.drainedListeners.delete(listener)
  }
}

/** What delivery reads to give way to requests. */
export type RequestLoad = Pick<RequestsInFlight, 'count' | 'onDrained'>
