import type { LeaseStore } from '../ports'

/** Leases of one process: in memory (one process owns the data dir). */
export class LocalLeases implements LeaseStore {
  private readonly held = new Map<string, { owner: string; until: number }>()

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const lease = this.held.get(name)
    if (lease && lease.owner !== owner && lease.until > now) return false
    this.held.set(name, { owner, until: now + ttlMs })
    return true
  }

  async release(name: string, owner: string): Promise<void> {
    if (this.held.get(name)?.owner === owner) this.held.delete(name)
  }

  async owner(name: string): Promise<string | null> {
    const lease = this.held.get(name)
    return lease && lease.until > Date.now() ? lease.owner : null
  }
}
