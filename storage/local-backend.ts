import { createStorage, type Storage } from 'unstorage'
import type { Backend } from './ports'
import { LocalCounters } from './local/counters'
import { LocalKeyValue } from './local/key-value'
import { LocalLeases } from './local/leases'
import { LocalLegacyQueues } from './local/legacy-queues'
import { LocalLogs } from './local/logs'
import { LocalSignals } from './local/signals'
import { LocalValues } from './local/values'

/**
 * The single-process backend: the local implementation of every port over one unstorage driver
 * (fs by default, memory in unit tests), with in-process locks, leases, counters and signals.
 */
export class LocalBackend implements Backend {
  readonly kind = 'local' as const
  readonly keyValue: LocalKeyValue
  readonly logs: LocalLogs
  readonly leases = new LocalLeases()
  readonly counters: LocalCounters
  readonly signals = new LocalSignals()
  readonly legacyQueues: LocalLegacyQueues

  /**
   * `journal`: write a transaction of several files to the journal first (storage/local/journal.ts).
   * On by default; off only where nothing outlives the process (a memory driver) or as a bench's baseline.
   */
  constructor(
    readonly storage: Storage = createStorage(),
    options: { journal?: boolean } = {},
  ) {
    const values = new LocalValues(storage)
    this.logs = new LocalLogs(values)
    this.keyValue = new LocalKeyValue(values, this.logs, this.signals, options.journal ?? true)
    this.counters = new LocalCounters(this.keyValue)
    this.legacyQueues = new LocalLegacyQueues(values)
  }

  async ping(): Promise<boolean> {
    try {
      await this.storage.hasItem('ping')
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    await this.signals.close()
    await this.storage.dispose()
  }
}
