import { createHash } from 'node:crypto'
import type { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import type { Clock } from '../common/clock'

/** What an upstream said about a package name, as cached. */
interface CachedPackument<P = unknown> {
  found: boolean
  packument?: P
  fetchedAt: number
}

export interface RegistryCacheOptions {
  /** How long a packument (or a "not on this upstream") stays fresh. Default 60 s. */
  packumentTtlMs?: number
  /** Packuments kept in process memory in front of storage. Default 1000. */
  memoryPackuments?: number
  /** Tarball bytes kept in process memory in front of storage. Default 128 MiB. */
  memoryTarballBytes?: number
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 40)

/** A Map used as an LRU: re-inserting moves a key to the end, eviction takes from the front. */
class Lru<V> {
  private readonly map = new Map<string, { value: V; size: number }>()
  private total = 0
  constructor(private readonly capacity: number) {}
  get(key: string): V | undefined {
    const hit = this.map.get(key)
    if (!hit) return undefined
    this.map.delete(key)
    this.map.set(key, hit)
    return hit.value
  }
  set(key: string, value: V, size = 1): void {
    this.delete(key)
    if (size > this.capacity) return
    this.map.set(key, { value, size })
    this.total += size
    for (const [oldest, entry] of this.map) {
      if (this.total <= this.capacity) break
      this.map.delete(oldest)
      this.total -= entry.size
    }
  }
  delete(key: string): void {
    const hit = this.map.get(key)
    if (hit) {
      this.map.delete(key)
      this.total -= hit.size
    }
  }
}

/**
 * The proxy's cache for upstreams with `cached: true`: packuments with a short TTL (memory,
 * then storage so other processes share them) and tarballs content-addressed by their
 * `dist.integrity`. Callers verify a tarball's integrity before `setTarball`, so whatever is
 * stored under an integrity key has that integrity.
 */
export class RegistryCache {
  readonly packumentTtlMs: number
  private readonly packuments: Lru<CachedPackument>
  private readonly tarballs: Lru<Buffer>

  constructor(
    private readonly store: RegistryCacheStore,
    private readonly clock: Clock,
    options: RegistryCacheOptions = {},
  ) {
    this.packumentTtlMs = options.packumentTtlMs ?? 60_000
    this.packuments = new Lru(options.memoryPackuments ?? 1000)
    this.tarballs = new Lru(options.memoryTarballBytes ?? 128 * 1024 * 1024)
  }

  /** The memory cache's key; storage keys are built in keys.ts from the same hashes. */
  private packumentKey(scope: string, name: string): string {
    return `${sha(scope)}:${sha(name)}`
  }

  /** A fresh cached answer of upstream `scope` (e.g. `ns/fw/upstreamId`) for `name`, or null. */
  async getPackument<P>(scope: string, name: string): Promise<CachedPackument<P> | null> {
    const key = this.packumentKey(scope, name)
    const fresh = (entry: CachedPackument | null | undefined) =>
      entry && this.clock.now() - entry.fetchedAt < this.packumentTtlMs
    const memory = this.packuments.get(key)
    if (fresh(memory)) return memory as CachedPackument<P>
    const stored = await this.store.getPackument<CachedPackument>(sha(scope), sha(name))
    if (!fresh(stored)) return null
    this.packuments.set(key, stored!)
    return stored as CachedPackument<P>
  }

  async setPackument(scope: string, name: string, answer: Omit<CachedPackument, 'fetchedAt'>): Promise<void> {
    const key = this.packumentKey(scope, name)
    const entry: CachedPackument = { ...answer, fetchedAt: this.clock.now() }
    this.packuments.set(key, entry)
    await this.store.setPackument(sha(scope), sha(name), entry)
  }

  /** Drops a name's packuments (after a publish or metadata write through the proxy). */
  async invalidate(scope: string, name: string): Promise<void> {
    const key = this.packumentKey(scope, name)
    this.packuments.delete(key)
    await this.store.deletePackument(sha(scope), sha(name))
  }

  async getTarball(integrity: string): Promise<Buffer | null> {
    const key = sha(integrity)
    const memory = this.tarballs.get(key)
    if (memory) return memory
    const buffer = await this.store.getTarball(key)
    if (buffer == null) return null
    this.tarballs.set(key, buffer, buffer.length)
    return buffer
  }

  /** Stores verified tarball bytes under their integrity. */
  async setTarball(integrity: string, bytes: Buffer): Promise<void> {
    const key = sha(integrity)
    this.tarballs.set(key, bytes, bytes.length)
    await this.store.setTarball(key, bytes)
  }
}
