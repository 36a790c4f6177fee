/**
 * Waiting in tests, one way for all of them: for state another process or the storage holds,
 * where no callback can tell. Prefer a callback or event where one exists; these poll.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls `condition` until it holds; throws naming `what` when `timeoutMs` passes first.
 * @example await waitFor(() => receiver.receipts.length === 2, 10_000, 'two attempts')
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what = 'condition',
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`)
    await pause(intervalMs)
  }
}

export interface EventuallyOptions<T> {
  timeoutMs?: number
  what?: string
  /** Whether a value read is the one waited for; by default anything but undefined, null and false. */
  accept?: (value: T) => boolean
  intervalMs?: number
}

/**
 * Reads until `accept` takes the value read, and returns it; throws naming `what` on timeout.
 * @example const entry = await eventually(() => audit.find(...), { what: 'the audit entry' })
 */
export async function eventually<T>(read: () => T | Promise<T>, options: EventuallyOptions<T> = {}): Promise<T> {
  const { timeoutMs = 10_000, what = 'value', intervalMs = 20 } = options
  const accept = options.accept ?? ((value: T) => value !== undefined && value !== null && value !== false)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (accept(value)) return value
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${timeoutMs} ms`)
    await pause(intervalMs)
  }
}
