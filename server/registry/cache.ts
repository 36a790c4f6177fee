import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import type { Clock } from '../common/clock'
import { decodeCooperatively, joinCooperatively } from '../common/cooperative-bytes'
import { parseJsonCooperatively, stringifyCooperatively } from '../common/cooperative-json'
import { UPSTREAM_MAX_MEMBERS } from './upstream/member-limit'
import { TimeSlice } from '../common/time-slice'

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

const NEWLINE = 0x0a

/**
 * An integrity as the memory tier's key: itself (a sha512 one is under 100 characters), hashed
 * only when an upstream wrote an outsized one, so a warm hit hashes nothing.
 */
const tarballMemoryKey = (integrity: string) => (integrity.length <= 200 ? integrity : sha(integrity))

/**
 * A stored entry: one line of JSON (`found`, `fetchedAt`), then the document's JSON as the
 * upstream sent it (or as written cooperatively): a 64 MB packument is copied, never
 * re-serialised or parsed as one value (CONTRACT.md 8).
 */
async function encodeEntry(entry: CachedPackument, raw: readonly Uint8Array[] | undefined): Promise<Buffer> {
  const slice = new TimeSlice()
  const header = `${JSON.stringify({ found: entry.found, fetchedAt: entry.fetchedAt })}\n`
  const body = !entry.found ? [] : (raw ?? (await stringifyCooperatively(entry.packument, slice)).pieces)
  return joinCooperatively([header, ...body], slice)
}

/** The header of a stored entry, or null when it is not one (an entry of an older layout: a miss). */
function entryHeader(bytes: Buffer): { found: boolean; fetchedAt: number; bodyAt: number } | null {
  const end = bytes.indexOf(NEWLINE)
  if (end < 0 || end > 200) return null
  try {
    const header = JSON.parse(bytes.subarray(0, end).toString()) as { found?: unknown; fetchedAt?: unknown }
    if (typeof header.found !== 'boolean' || typeof header.fetchedAt !== 'number') return null
    return { found: header.found, fetchedAt: header.fetchedAt, bodyAt: end + 1 }
  } catch {
    return null
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
  /** Bounded by count (#30): least recently used first out. */
  private readonly packuments: LRUCache<string, CachedPackument>
  /** Bounded by bytes (#30); a tarball larger than the whole bound is not kept in memory at all. */
  private readonly tarballs: LRUCache<string, Buffer>

  constructor(
    private readonly store: RegistryCacheStore,
    private readonly clock: Clock,
    options: RegistryCacheOptions = {},
  ) {
    this.packumentTtlMs = options.packumentTtlMs ?? 60_000
    this.packuments = new LRUCache({ max: options.memoryPackuments ?? 1000 })
    this.tarballs = new LRUCache({
      maxSize: options.memoryTarballBytes ?? 128 * 1024 * 1024,
      sizeCalculation: (bytes) => Math.max(1, bytes.length),
    })
  }

  /** What the memory tier holds now: packuments (count) and tarballs (count and bytes). */
  memoryUse(): { packuments: number; tarballs: number; tarballBytes: number } {
    return {
      packuments: this.packuments.size,
      tarballs: this.tarballs.size,
      tarballBytes: this.tarballs.calculatedSize,
    }
  }

  /**
   * The memory cache's key: the scope and name themselves (a newline is in neither), so a warm
   * hit hashes nothing (an outsized name from a URL is hashed); storage keys are built in
   * keys.ts from their hashes.
   */
  private packumentKey(scope: string, name: string): string {
    return `${scope}\n${name.length <= 300 ? name : sha(name)}`
  }

  /** A fresh cached answer of upstream `scope` (e.g. `ns/fw/upstreamId`) for `name`, or null. */
  async getPackument<P>(scope: string, name: string): Promise<CachedPackument<P> | null> {
    const key = this.packumentKey(scope, name)
    const fresh = (entry: CachedPackument | null | undefined) =>
      entry && this.clock.now() - entry.fetchedAt < this.packumentTtlMs
    const memory = this.packuments.get(key)
    if (fresh(memory)) return memory as CachedPackument<P>
    const bytes = await this.store.getPackument(sha(scope), sha(name))
    const header = bytes && entryHeader(bytes)
    if (!header || !fresh(header)) return null
    let stored: CachedPackument = { found: header.found, fetchedAt: header.fetchedAt }
    if (header.found) {
      const slice = new TimeSlice()
      try {
        const pieces = await decodeCooperatively(bytes.subarray(header.bodyAt), slice)
        stored = {
          ...stored,
          packument: await parseJsonCooperatively(pieces, slice, { maxMembers: UPSTREAM_MAX_MEMBERS }),
        }
      } catch {
        // Written by us; cut short (a full disk), or kept before the member bound: as if it were not there.
        return null
      }
    }
    this.packuments.set(key, stored)
    return stored as CachedPackument<P>
  }

  /**
   * Keeps an upstream's answer. `raw`: the bytes the upstream sent for `packument`, stored as they
   * are (cheaper than writing the parsed document again); without them the document is written.
   */
  async setPackument(
    scope: string,
    name: string,
    answer: Omit<CachedPackument, 'fetchedAt'>,
    raw?: readonly Uint8Array[],
  ): Promise<void> {
    const key = this.packumentKey(scope, name)
    const entry: CachedPackument = { ...answer, fetchedAt: this.clock.now() }
    this.packuments.set(key, entry)
    await this.store.setPackument(sha(scope), sha(name), await encodeEntry(entry, raw))
  }

  /** Drops a name's packuments (after a publish or metadata write through the proxy). */
  async invalidate(scope: string, name: string): Promise<void> {
    const key = this.packumentKey(scope, name)
    this.packuments.delete(key)
    await this.store.deletePackument(sha(scope), sha(name))
  }

  /** Tarball bytes by integrity: memory is keyed by the integrity itself, storage by its hash. */
  async getTarball(integrity: string): Promise<Buffer | null> {
    const memory = this.tarballs.get(tarballMemoryKey(integrity))
    if (memory) return memory
    const buffer = await this.store.getTarball(sha(integrity))
    if (buffer == null) return null
    this.tarballs.set(tarballMemoryKey(integrity), buffer)
    return buffer
  }

  /** Stores verified tarball bytes under their integrity. */
  async setTarball(integrity: string, bytes: Buffer): Promise<void> {
    this.tarballs.set(tarballMemoryKey(integrity), bytes)
    await this.store.setTarball(sha(integrity), bytes)
  }
}
