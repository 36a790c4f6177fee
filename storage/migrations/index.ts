import { randomUUID } from 'node:crypto'
import type { Backend } from '../backend'
import { keys } from '../repositories/keys'
import { moveToHashTags } from './hash-tags'
import { storeEventsOnce } from './events-once'
import { indexNamespaces } from './namespace-index'
import { pageDeliveryIndexes } from './delivery-index-pages'

/** One step from layout `version - 1` to `version`. Steps are idempotent: an interrupted run is repeated. */
export interface MigrationStep {
  version: number
  name: string
  /** Returns how many keys it changed. */
  run(backend: Backend): Promise<number>
}

/**
 * Every layout change, in order. Layout 1 is what releases before hash tags wrote (they stored
 * no version). A step that reads keys of an older layout must come before the step renaming them:
 * the event layout's keys (legacy-events.ts) keep their names through `hash-tags`, so converting
 * them comes after it and writes the tagged names.
 */
const MIGRATION_STEPS: readonly MigrationStep[] = [
  { version: 2, name: 'hash-tags', run: moveToHashTags },
  { version: 3, name: 'events-once', run: storeEventsOnce },
  { version: 4, name: 'namespace-index', run: indexNamespaces },
  { version: 5, name: 'delivery-index-pages', run: pageDeliveryIndexes },
]

/** The layout this release reads and writes. */
export const STORAGE_LAYOUT = MIGRATION_STEPS[MIGRATION_STEPS.length - 1].version

export class StorageLayoutError extends Error {
  constructor(found: number) {
    super(`the storage is in layout ${found}, newer than this release knows (${STORAGE_LAYOUT}): run a newer release`)
    this.name = 'StorageLayoutError'
  }
}

export interface MigrationOptions {
  /** Lease owner; unique per process. */
  owner?: string
  /** Lease time to live; renewed while the steps run. */
  leaseMs?: number
  /** How often a process waiting for another's migration looks again. */
  pollMs?: number
  /** Called once per step run. */
  onStep?: (step: MigrationStep, changed: number) => void
}

interface MigrationOutcome {
  from: number
  to: number
  /** Names of the steps this process ran (empty when the layout was current or another process migrated). */
  ran: string[]
}

async function storedLayout(backend: Backend): Promise<number> {
  return (await backend.keyValue.get<{ version: number }>(keys.storageLayout))?.version ?? 1
}

/**
 * Brings the stored data to STORAGE_LAYOUT before anything else reads it. Several processes
 * may start at once: one holds the migration lease and runs the steps (recording the layout
 * after each), the others wait until the layout is current, or take over when the holder dies
 * and its lease expires. Every process of the old release must be stopped first: one still
 * running would go on writing the old names.
 * @example await migrateStorage(backend) // at start, before bootstrap
 */
export async function migrateStorage(backend: Backend, options: MigrationOptions = {}): Promise<MigrationOutcome> {
  const owner = options.owner ?? randomUUID()
  const leaseMs = options.leaseMs ?? 30_000
  const first = await storedLayout(backend)
  if (first > STORAGE_LAYOUT) throw new StorageLayoutError(first)
  if (first === STORAGE_LAYOUT) return { from: first, to: first, ran: [] }
  for (;;) {
    if (await backend.leases.acquire(keys.migrationLease, owner, leaseMs)) {
      const renewal = setInterval(
        () => void backend.leases.acquire(keys.migrationLease, owner, leaseMs).catch(() => undefined),
        leaseMs / 3,
      )
      renewal.unref()
      try {
        const from = await storedLayout(backend)
        const ran: string[] = []
        for (const step of MIGRATION_STEPS) {
          if (step.version <= from) continue
          const changed = await step.run(backend)
          await backend.keyValue.set(keys.storageLayout, { version: step.version })
          options.onStep?.(step, changed)
          ran.push(step.name)
        }
        return { from, to: STORAGE_LAYOUT, ran }
      } finally {
        clearInterval(renewal)
        await backend.leases.release(keys.migrationLease, owner)
      }
    }
    // Another process is migrating: wait for it to finish (or for its lease to run out).
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250))
    const now = await storedLayout(backend)
    if (now >= STORAGE_LAYOUT) return { from: first, to: now, ran: [] }
  }
}
