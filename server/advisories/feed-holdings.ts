import type { AdvisoryFeedState } from '../../storage/repositories/advisory-feed'
import type { LoadMemory } from './load-memory'
import type { FollowMemory } from './snapshot-follow'
import type { AdvisoryIndex } from './types'
import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import type { FeedSyncReport } from './archive-store'
import type { DownloadResult } from './feed-download'

/** Told after a feed index was swapped in: the ecosystem, the index it replaced (null: none), the new one. */
export type AdvisorySwapListener = (ecosystem: Ecosystem, previous: AdvisoryIndex | null, next: AdvisoryIndex) => void

/** What one process holds of an ecosystem's feed, and the shared state it last read. */
export interface FeedEcosystemView {
  ecosystem: Ecosystem
  /** Data this process serves from (downloaded here or loaded from the stored snapshot). */
  index: AdvisoryIndex | null
  state: AdvisoryFeedState | null
}

export interface Held {
  index: AdvisoryIndex | null
  /**
   * What the archive load behind `index` left for the next refresh (in this process only); null
   * when the index came from a stored snapshot, whose next refresh then reads every entry.
   */
  memory: LoadMemory | null
  /**
   * What the stored snapshot load behind `index` left (its blocks and records), for reading the
   * next stored snapshot; null when `memory` stands (a download here) or none was left.
   */
  followed: FollowMemory | null
  snapshotId: string | null
  /** A stored snapshot that failed to load here: not retried, and not trusted for a 304. */
  broken: string | null
  state: AdvisoryFeedState | null
}

/**
 * The feed data this process serves, per ecosystem, and what stands behind it. Readers see a new
 * index in one step (`swap`): the old feed or the new one, never half.
 */
export class FeedHoldings {
  private readonly held = new Map<Ecosystem, Held>()

  /** `onChange`: called after an index was swapped in, with the one it replaced (null: none held). */
  constructor(private readonly onChange?: AdvisorySwapListener) {}

  /** The ecosystem's data held here, or null when none is loaded yet. */
  index(ecosystem: Ecosystem): AdvisoryIndex | null {
    return this.held.get(ecosystem)?.index ?? null
  }

  view(): FeedEcosystemView[] {
    return ECOSYSTEMS.map((ecosystem) => {
      const held = this.held.get(ecosystem)
      return { ecosystem, index: held?.index ?? null, state: held?.state ?? null }
    })
  }

  slot(ecosystem: Ecosystem): Held {
    let held = this.held.get(ecosystem)
    if (!held) {
      held = { index: null, memory: null, followed: null, snapshotId: null, broken: null, state: null }
      this.held.set(ecosystem, held)
    }
    return held
  }

  /** Takes a download's outcome: its state, and its index when it loaded one. */
  adopt(ecosystem: Ecosystem, result: DownloadResult): FeedSyncReport {
    const { loaded } = result
    if (loaded) this.swap(ecosystem, loaded.index, loaded.memory, loaded.snapshotId, result.state)
    else if (result.state) this.slot(ecosystem).state = result.state
    return result.report
  }

  /** The one step readers see: the new index replaces the old in a single assignment. */
  swap(
    ecosystem: Ecosystem,
    index: AdvisoryIndex,
    memory: LoadMemory | FollowMemory | null,
    snapshotId: string,
    state?: AdvisoryFeedState,
  ): void {
    const held = this.slot(ecosystem)
    const previous = held.index
    held.index = index
    // A download's memory serves both kinds of refresh; a snapshot load's only the next snapshot.
    const downloaded = memory && 'names' in memory ? memory : null
    held.memory = downloaded
    held.followed = downloaded ? null : memory
    held.snapshotId = snapshotId
    held.broken = null
    if (state) held.state = state
    this.onChange?.(ecosystem, previous, index)
  }
}
