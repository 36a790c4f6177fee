/**
 * Runs at most `limit` pieces of work at once; the rest wait, first come first served.
 *
 * Why the delivery engine needs it: under a full fan-out every actor has work, and each step
 * (taking a batch, recording an attempt) is a chain of storage round trips. Their replies arrive
 * together and their continuations run as one burst of microtasks, ahead of any API request's
 * next step. Bounding the steps in flight bounds that burst, so API latency stays flat; the
 * throughput, bound by CPU rather than by how many steps wait on Redis at once, stays the same.
 * @example const limit = new WorkLimit(32); await limit.run(() => feed.take(...))
 */
export class WorkLimit {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running++
    // The slot is handed over by the finishing work (`running` unchanged), so none is lost or doubled.
    else await new Promise<void>((resolve) => this.waiting.push(resolve))
    try {
      return await work()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  /** Work running now (tests). */
  get active(): number {
    return this.running
  }
}
