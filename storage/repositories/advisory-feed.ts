import type { Backend } from '../backend'
import { keys } from './keys'

/** A feed problem as status shows it. */
export interface AdvisoryFeedError {
  at: string
  message: string
}

/**
 * What every process knows of one ecosystem's advisory feed: how the stored snapshot was made
 * (and the validators for the next conditional request), its figures and the refresh history.
 */
export interface AdvisoryFeedState {
  ecosystem: string
  /** `feed`: downloaded from ADVISORY_FEED_URL; `file`: imported with the admin CLI. */
  origin?: 'feed' | 'file'
  /** Hash of the feed URL the data came from (the URL may carry credentials). */
  urlHash?: string
  etag?: string
  lastModified?: string
  /** The stored snapshot; absent until one was loaded. */
  snapshotId?: string
  records: number
  invalid: number
  withdrawn: number
  /** Last download attempt, successful or not (the refresh schedule runs from it). */
  lastAttempt?: string
  /** Last time the data was confirmed current: a new archive or a 304. */
  lastRefresh?: string
  /** Last time the data changed. */
  lastChange?: string
  lastError?: AdvisoryFeedError | null
}

/** Advisory feed state and snapshots, per ecosystem (the download lease is in LeaseRepository). */
export class AdvisoryFeedRepository {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  state(ecosystem: string): Promise<AdvisoryFeedState | null> {
    return this.backend.keyValue.get<AdvisoryFeedState>(keys.advisoryFeed(ecosystem))
  }

  async states(ecosystems: readonly string[]): Promise<Map<string, AdvisoryFeedState>> {
    const values = await this.backend.keyValue.getMany<AdvisoryFeedState>(ecosystems.map((e) => keys.advisoryFeed(e)))
    const out = new Map<string, AdvisoryFeedState>()
    ecosystems.forEach((ecosystem, index) => values[index] && out.set(ecosystem, values[index]!))
    return out
  }

  saveState(state: AdvisoryFeedState): Promise<void> {
    return this.backend.keyValue.set(keys.advisoryFeed(state.ecosystem), state)
  }

  /** The compressed snapshot bytes, or null when it is gone (replaced meanwhile). */
  snapshot(ecosystem: string, id: string): Promise<Uint8Array | null> {
    return this.backend.keyValue.getBytes(keys.advisorySnapshot(ecosystem, id))
  }

  hasSnapshot(ecosystem: string, id: string): Promise<boolean> {
    return this.backend.keyValue.has(keys.advisorySnapshot(ecosystem, id))
  }

  saveSnapshot(ecosystem: string, id: string, bytes: Uint8Array): Promise<void> {
    return this.backend.keyValue.setBytes(keys.advisorySnapshot(ecosystem, id), bytes)
  }

  deleteSnapshot(ecosystem: string, id: string): Promise<void> {
    return this.backend.keyValue.delete(keys.advisorySnapshot(ecosystem, id))
  }
}
