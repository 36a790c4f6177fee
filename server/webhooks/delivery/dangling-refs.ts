import { logger } from '../../app/logger'

/** How long a global-index reference may name no webhook before it is dropped. */
export const DANGLING_AFTER_MS = 5 * 60_000

/**
 * References of the global webhook index that a delivery host adopted without finding the
 * webhook's document: when that was first and last seen. One seen so for `DANGLING_AFTER_MS`,
 * with no gap that long between two sightings, is dropped (`drop`): left by a process that
 * stopped between a delete and the reference's removal, it was leased, read and released again by
 * every pass of every process, for good. Not sooner: a reference also precedes each creation by the
 * length of its transaction. A sighting not followed by another within that time is forgotten: the
 * webhook was created meanwhile (and adopted elsewhere), so its later delete starts afresh.
 */
export class DanglingRefs {
  private readonly sightings = new Map<string, { first: number; last: number }>()

  constructor(
    private readonly now: () => number,
    private readonly drop: (ref: string) => Promise<void>,
  ) {}

  /** The index as a pass read it: what is no longer listed, or not seen missing lately, is forgotten. */
  listed(all: readonly string[]): void {
    if (this.sightings.size === 0) return
    const present = new Set(all)
    const now = this.now()
    for (const [ref, seen] of this.sightings)
      if (!present.has(ref) || now - seen.last >= DANGLING_AFTER_MS) this.sightings.delete(ref)
  }

  found(ref: string): void {
    this.sightings.delete(ref)
  }

  /** `ref` was adopted and its document is absent: the drop once that has lasted long enough, else null. */
  missing(ref: string): Promise<void> | null {
    const now = this.now()
    const seen = this.sightings.get(ref)
    if (!seen || now - seen.last >= DANGLING_AFTER_MS) {
      this.sightings.set(ref, { first: now, last: now })
      return null
    }
    seen.last = now
    if (now - seen.first < DANGLING_AFTER_MS) return null
    this.sightings.delete(ref)
    logger.info('webhook reference without a webhook dropped', { webhook: ref })
    return this.drop(ref).catch((error) =>
      logger.warn('dropping a webhook reference failed', { webhook: ref, error: String(error) }),
    )
  }
}
