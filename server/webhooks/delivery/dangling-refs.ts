import { logger } from '../../app/logger'

/** How long a global-index reference may name no webhook before it is dropped. */
export const DANGLING_AFTER_MS = 5 * 60_000

/**
 * References of the global webhook index that a delivery host adopted without finding the
 * webhook's document, and when that was first seen. One that stays so for `DANGLING_AFTER_MS` is
 * dropped (`drop`): left by a process that stopped between a delete and the reference's removal,
 * it was leased, read and released again by every pass of every process, for good. Not sooner: a
 * reference also precedes each creation by the length of its transaction.
 */
export class DanglingRefs {
  private readonly missingSince = new Map<string, number>()

  constructor(
    private readonly now: () => number,
    private readonly drop: (ref: string) => Promise<void>,
  ) {}

  /** The index as a pass read it: a reference no longer listed is no longer watched. */
  listed(all: readonly string[]): void {
    if (this.missingSince.size === 0) return
    const present = new Set(all)
    for (const ref of this.missingSince.keys()) if (!present.has(ref)) this.missingSince.delete(ref)
  }

  found(ref: string): void {
    this.missingSince.delete(ref)
  }

  /** `ref` was adopted and its document is absent: the drop once that has lasted long enough, else null. */
  missing(ref: string): Promise<void> | null {
    const now = this.now()
    const since = this.missingSince.get(ref)
    if (since === undefined) this.missingSince.set(ref, now)
    if (since === undefined || now - since < DANGLING_AFTER_MS) return null
    this.missingSince.delete(ref)
    logger.info('webhook reference without a webhook dropped', { webhook: ref })
    return this.drop(ref).catch((error) =>
      logger.warn('dropping a webhook reference failed', { webhook: ref, error: String(error) }),
    )
  }
}
