/**
 * A webhook's index of delivery records (the last `RECORDS_KEPT`, newest first), stored so that a
 * new delivery rewrites a few hundred bytes instead of every id. It was one list of 128 ids (about
 * 4 KB) rewritten, hashed and sent to Redis on every delivery; now the ids sit in three parts:
 * - `ids`, the newest, at most `PAGE_SIZE`: a new delivery goes here;
 * - `pages`: full pages sealed into keys of their own (written once, never changed), newest first;
 * - `tail`: the oldest ids still kept, from the oldest page: the ones dropped next, one per delivery.
 * The index document holds `ids`, the page numbers and `tail` (about 16 ids in all). When `ids` is
 * full it is sealed as a page; when `tail` runs out, the oldest page becomes the tail (read once,
 * its key deleted). An index written before pages (`ids` alone, up to 128) reads the same: its
 * first new delivery seals those ids and they become the tail at once.
 */

/** Ids in a sealed page (and in `ids` at most). */
export const PAGE_SIZE = 16

/** A sealed page: its number (its key's last part) and how many ids it holds. */
export interface IndexPage {
  page: number
  size: number
}

/** The index document as stored. */
export interface DeliveryIndex {
  /** The newest delivery ids, newest first (ids are time-ordered). */
  ids: string[]
  /** Sealed pages between `ids` and `tail`, newest first. */
  pages?: IndexPage[]
  /** The oldest ids kept, newest first. */
  tail?: string[]
}

/** What adding a delivery changes besides the index document. */
export interface IndexChange {
  index: DeliveryIndex
  /** A page to write (the ids just sealed). */
  sealed: { page: number; ids: string[] } | null
  /** Pages to delete: they became the tail. */
  emptied: number[]
  /** Delivery ids no longer kept: their records and attempts go. */
  dropped: string[]
}

/** Thrown by `addToIndex` when the oldest page must become the tail and its ids were not given. */
export class PageNeeded extends Error {
  constructor(readonly page: number) {
    super(`delivery index page ${page} is needed`)
    this.name = 'PageNeeded'
  }
}

const pagesSize = (pages: IndexPage[]) => pages.reduce((sum, page) => sum + page.size, 0)

/**
 * The page an addition to `index` will turn into the tail (the oldest, when the tail runs out),
 * so that a transaction can read it with the index; null when none.
 */
export function pageNeededNext(index: DeliveryIndex | null, kept: number): number | null {
  const pages = index?.pages ?? []
  if (!index || pages.length === 0) return null
  const tail = index.tail ?? []
  const excess = index.ids.length + pagesSize(pages) + tail.length + 1 - kept
  return excess > tail.length ? pages[pages.length - 1].page : null
}

/**
 * `index` with `deliveryId` added, and ids beyond `kept` dropped, oldest first. `pageIds` gives the
 * ids of a sealed page (see `pageNeededNext`); a page it does not give throws `PageNeeded`.
 * @example addToIndex({ ids: ['b'] }, 'c', 128, () => undefined).index.ids // ['c', 'b']
 */
export function addToIndex(
  index: DeliveryIndex | null,
  deliveryId: string,
  kept: number,
  pageIds: (page: number) => string[] | undefined,
): IndexChange {
  let ids = index?.ids ?? []
  let pages = index?.pages ?? []
  let tail = index?.tail ?? []
  let sealed: IndexChange['sealed'] = null
  const emptied: number[] = []
  const newest = ids.length === 0 || deliveryId > ids[0]
  if (newest && ids.length >= PAGE_SIZE) {
    const page = Math.max(0, ...pages.map((entry) => entry.page)) + 1
    sealed = { page, ids }
    pages = [{ page, size: ids.length }, ...pages]
    ids = []
  }
  // Ids are time-ordered: a new delivery's is usually the newest, and goes first unsorted.
  ids = newest ? [deliveryId, ...ids] : [deliveryId, ...ids].sort().reverse()
  const dropped: string[] = []
  let excess = ids.length + pagesSize(pages) + tail.length - kept
  while (excess > 0) {
    if (tail.length > 0) {
      const drop = Math.min(excess, tail.length)
      dropped.push(...tail.slice(tail.length - drop))
      tail = tail.slice(0, tail.length - drop)
      excess -= drop
    } else if (pages.length > 0) {
      const oldest = pages[pages.length - 1]
      pages = pages.slice(0, -1)
      if (sealed?.page === oldest.page) {
        // Sealed just now and the tail at once (an index written before pages): never written.
        tail = sealed.ids
        sealed = null
      } else {
        const stored = pageIds(oldest.page)
        if (!stored) throw new PageNeeded(oldest.page)
        tail = stored
        emptied.push(oldest.page)
      }
    } else {
      // Only `ids` is left (`kept` under a page): its oldest go.
      dropped.push(...ids.slice(kept))
      ids = ids.slice(0, kept)
      excess = 0
    }
  }
  const next: DeliveryIndex = { ids, ...(pages.length ? { pages } : {}), ...(tail.length ? { tail } : {}) }
  return { index: next, sealed, emptied, dropped }
}

/** Every id of the index, newest first, with the sealed pages' ids from `pageIds`. */
export function indexedIds(index: DeliveryIndex | null, pageIds: (page: number) => string[] | null): string[] {
  if (!index) return []
  return [...index.ids, ...(index.pages ?? []).flatMap((entry) => pageIds(entry.page) ?? []), ...(index.tail ?? [])]
}
