import type { LeaseStore } from '../ports'
import { LEASE_ACQUIRE, LEASE_RELEASE } from '../redis-scripts'
import { evalScript } from '../redis-eval'
import type { RedisConnection } from './connection'

/** Leases on Redis: one key per lease holding its owner, expiring with it. */
export class RedisLeases implements LeaseStore {
  constructor(private readonly connection: RedisConnection) {}

  private key(name: string): string {
    return this.connection.raw(`lease:${name}`)
  }

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await evalScript(this.connection.client, LEASE_ACQUIRE, 1, this.key(name), owner, String(ttlMs))) === 1
  }

  async release(name: string, owner: string): Promise<void> {
    await evalScript(this.connection.client, LEASE_RELEASE, 1, this.key(name), owner)
  }

  owner(name: string): Promise<string | null> {
    return this.connection.client.get(this.key(name))
  }
}
