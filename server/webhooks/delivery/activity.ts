/** Lets queued promise callbacks and immediate-scheduled work run. */
async function settle(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve))
}

/**
 * Tracks background work (routing passes, attempts, snapshot writes) so that shutdown and tests
 * can wait until nothing is running.
 */
export class Activity {
  private readonly pending = new Set<Promise<unknown>>()

  /** Registers `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work)
    const forget = () => this.pending.delete(work)
    work.then(forget, forget)
    return work
  }

  get size(): number {
    return this.pending.size
  }

  /** Resolves once nothing is pending, also after the callbacks of the last work ran. */
  async idle(): Promise<void> {
    for (;;) {
      await settle()
      if (this.pending.size === 0) {
        await settle()
        if (this.pending.size === 0) return
      }
      await Promise.allSettled([...this.pending])
    }
  }
}
