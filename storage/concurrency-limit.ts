/**
 * At most `max` tasks run at once; the others wait in arrival order. Storage reads of many keys
 * fan out (a page of delivery records is thousands of log entries): unbounded, each an open file,
 * they exhausted the process's file descriptors and every other request failed with them.
 * @example const limit = concurrencyLimit(32); await limit(() => readFile(path))
 */
export function concurrencyLimit(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  // A finishing task hands its slot to the first waiter, if any: `running` only counts up on a free slot.
  const next = () => {
    const resume = waiting.shift()
    if (resume) resume()
    else running--
  }
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await task()
    } finally {
      next()
    }
  }
}
