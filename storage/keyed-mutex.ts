/**
 * In-process mutual exclusion per key, so read-modify-write on the single-process
 * backend is atomic. Keys are locked in sorted order to avoid deadlocks.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>()

  async runExclusive<R>(keys: string[], body: () => Promise<R>): Promise<R> {
    const sorted = [...new Set(keys)].sort()
    const releases: (() => void)[] = []
    for (const key of sorted) releases.push(await this.lock(key))
    try {
      return await body()
    } finally {
      for (const release of releases.reverse()) release()
    }
  }

  private async lock(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>((resolve) => (release = resolve))
    const tail = previous.then(() => current)
    this.tails.set(key, tail)
    await previous
    return () => {
      release()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
