import type { Backend } from '../backend'
import { keys, webhookKeys } from './keys'

/** One named lease: held by one owner at a time until released or its ttl passes. */
export interface Lease {
  readonly name: string
  /** Acquires or renews for `owner`; false when another owner holds it. */
  acquire(owner: string, ttlMs: number): Promise<boolean>
  release(owner: string): Promise<void>
  owner(): Promise<string | null>
}

/** The cluster's leases by what they guard; their names come from keys.ts. */
export class LeaseRepository {
  constructor(private readonly backend: Pick<Backend, 'leases'>) {}

  /** Log retention: one process trims the logs per pass. */
  retention(): Lease {
    return this.named(keys.retentionLease)
  }

  /** A webhook's delivery actor: one owner per webhook. */
  webhook(ns: string, id: string): Lease {
    return this.named(webhookKeys.webhookLease(ns, id))
  }

  /** An ecosystem's advisory feed download. */
  advisoryFeed(ecosystem: string): Lease {
    return this.named(keys.advisoryFeedLease(ecosystem))
  }

  private named(name: string): Lease {
    const backend = this.backend
    return {
      name,
      acquire: (owner, ttlMs) => backend.leases.acquire(name, owner, ttlMs),
      release: (owner) => backend.leases.release(name, owner),
      owner: () => backend.leases.owner(name),
    }
  }
}
