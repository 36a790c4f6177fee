/**
 * Thrown from an event handler (or returned by the `busy` option's check, as seconds) to push
 * back: the receiver answers 429 or 503 with `Retry-After`, and the sender tries the same
 * delivery again later. Events handled before it stay handled (their marks are set).
 */
export class RetryLater extends Error {
  override readonly name = 'RetryLater'
  constructor(
    readonly seconds: number,
    readonly status: 429 | 503 = 503,
  ) {
    super(`retry in ${seconds} s`)
    if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError('Retry-After must be whole seconds >= 0')
  }
}

/**
 * @example
 * async onEvent(event) { if (queue.length > 10_000) throw retryLater(30, 429); queue.push(event) }
 */
export function retryLater(seconds: number, status: 429 | 503 = 503): RetryLater {
  return new RetryLater(seconds, status)
}
