import { mergeWrites } from '../tx-part'
import { LRUCache } from 'lru-cache'
import type { Backend, TxWrites } from '../backend'
import { own } from '../own'
import type { FirewallVersion, StoredFirewall } from '../model/firewall'
import { keys } from './keys'
import { RECENT_LOOKUP_LIMITS, RecentLookups, followChanges } from './recent-lookups'
import type { SecretBox } from '../secrets/secret-box'
import { mapFirewallSecrets } from '../secrets/secret-fields'

export type { FirewallVersion, StoredFirewall } from '../model/firewall'

interface FIndex {
  /**
   * Every firewall id ever created, with the last version of a deleted one and the first version
   * of the live one (absent for firewalls created before it was recorded: version 1).
   */
  items: Record<string, { deletedAtVersion?: number; createdAtVersion?: number }>
}

interface FirewallChange<F extends StoredFirewall, R> {
  /** The next configuration (its `version` is assigned here), or null to delete. */
  next: F | null
  summary: string
  /** Further writes in the same transaction (events, logs), built from the stored result. */
  also?: (stored: F | null, previous: F | null) => TxWrites
  result: (stored: F | null) => R
  /**
   * Nothing changed: the firewall keeps its document and version, and only `also`'s writes are
   * made (called with the current document as both; the call's audit entry), in the transaction
   * that checked the decision was made on the stored document.
   */
  unchanged?: boolean
}

/** Namespaces whose firewall list, and single firewalls, a process keeps (least recently read go first). */
export const FIREWALL_CACHE_LIMITS = { namespaces: 1_000, singles: 5_000 }

const singleKey = (ns: string, id: string) => `${ns}\n${id}`

/**
 * Firewall documents, their append-only history and the namespace index, changed atomically.
 * Credentials are sealed by `secrets` on every write and opened on every read, history included.
 * `F` is the domain's firewall document and `A` the actor it records with each version; the
 * repository reads only the fields of `StoredFirewall`.
 */
export class FirewallRepository<F extends StoredFirewall = StoredFirewall, A = unknown> {
  /** Every live firewall of a namespace, with the namespace's write stamp they were read under. */
  private readonly cache: LRUCache<string, { stamp: string; firewalls: F[] }>
  /**
   * Fs read one by one, by namespace and id (ids come from URLs: an unknown one is cached as
   * null), with the stamp they were read under. Bounded (#30): a client asking for ever new ids
   * pushes out the least recently read, never grows the process.
   */
  private readonly singles: LRUCache<string, { stamp: string; firewall: F | null }>
  /**
   * The namespaces' write stamps (#27: every read of a firewall asked storage for it, a round trip
   * per API call). Ended by this process's own writes when they commit, and by the change
   * notification every write announces to all processes (`followChanges`); kept only while those
   * notifications are live.
   */
  private readonly stamps: RecentLookups<string | null>
  private listening: (() => void) | null = null
  /**
   * The stored (sealed) form of each document this process opened, and each namespace's index as
   * last read or written here: what a `mutate` assumes storage holds, so that it writes in one
   * round trip instead of reading first (#27). A stale assumption costs the read it saved.
   */
  private readonly sealedOf = new WeakMap<F, F>()
  private readonly indexes: LRUCache<string, { index: FIndex | null }>
  /**
   * The document each of this process's own writes stored, by namespace and id, and when (#27: the
   * write's announcement ends the stamp it is kept under, so the next edit of the same firewall
   * read it back first, a round trip per edit). Only ever assumed or checked by a write
   * (`newestKnown`, `keptForEdit`), never answered to a reader; bounded like `singles`.
   */
  private readonly written: LRUCache<string, { firewall: F; at: number }>
  private readonly now: () => number

  constructor(
    private readonly backend: Pick<Backend, 'keyValue' | 'signals'>,
    private readonly secrets: SecretBox,
    limits: { namespaces: number; singles: number } = FIREWALL_CACHE_LIMITS,
    now?: () => number,
  ) {
    this.cache = new LRUCache({ max: limits.namespaces })
    this.singles = new LRUCache({ max: limits.singles })
    this.stamps = new RecentLookups({ ttlMs: RECENT_LOOKUP_LIMITS.ttlMs, max: limits.namespaces }, now)
    this.indexes = new LRUCache({ max: limits.namespaces })
    this.written = new LRUCache({ max: limits.singles })
    this.now = now ?? (() => performance.now())
  }

  /**
   * The namespace's write stamp: from `stamps` while no change was announced since it was read,
   * else what `read` answers (by default the stamp alone).
   */
  private stampOf(
    ns: string,
    read = () => this.backend.keyValue.get<string>(keys.firewallStamp(ns)),
  ): Promise<string | null> {
    this.listening ??= followChanges(this.backend.signals, this.stamps, 'firewalls')
    return this.stamps.through(ns, ns, read, () => this.backend.signals.eventsLive())
  }

  /** Entries the per-process caches hold now (lists by namespace, single firewalls, own writes). */
  cached(): { namespaces: number; singles: number; written: number } {
    return { namespaces: this.cache.size, singles: this.singles.size, written: this.written.size }
  }

  private open(ns: string, id: string, stored: F): F {
    const opened = mapFirewallSecrets(stored, ns, id, (value, context) => this.secrets.open(value, context))
    this.sealedOf.set(opened, stored)
    return opened
  }

  private seal(ns: string, id: string, firewall: F): F {
    return mapFirewallSecrets(firewall, ns, id, (value, context) => this.secrets.seal(value, context))
  }

  private openVersion(ns: string, id: string, entry: FirewallVersion<F, A>): FirewallVersion<F, A> {
    return { ...entry, config: this.open(ns, id, entry.config) }
  }

  /**
   * One firewall; from this process's caches while the namespace's write stamp is unchanged,
   * else from storage. (One request reads the same firewall several times: permission, references,
   * the edit; after a write each read would otherwise cost two round trips.)
   */
  async get(ns: string, id: string): Promise<F | null> {
    // A stamp not kept is read with the document, in one round trip (#27: after every write, each
    // read of a firewall was two); the document is then the stamp's or newer (`ordered`).
    let read: { stored: F | null } | undefined
    const stamp = await this.stampOf(ns, async () => {
      const [stamp, stored] = await this.backend.keyValue.getMany<unknown>(
        [keys.firewallStamp(ns), keys.firewall(ns, id)],
        { ordered: true },
      )
      read = { stored: stored as F | null }
      return stamp as string | null
    })
    const listed = this.cache.get(ns)
    if (listed && stamp !== null && listed.stamp === stamp) return listed.firewalls.find((fw) => fw.id === id) ?? null
    const single = this.singles.get(singleKey(ns, id))
    if (single && stamp !== null && single.stamp === stamp) return single.firewall
    // Kept, or read by another call (of another firewall): the document is read after it.
    const stored = read ? read.stored : await this.backend.keyValue.get<F>(keys.firewall(ns, id))
    const firewall = stored && this.open(ns, id, stored)
    // Read after the stamp: a write in between leaves a newer document under an older stamp, which the next read misses.
    if (stamp !== null) this.singles.set(singleKey(ns, id), { stamp, firewall })
    return firewall
  }

  /**
   * What `get` would answer when it needs no read and no turn (the stamp kept, the document cached
   * under it); undefined otherwise. The hot reads answer from it in the same turn (#27: each turn of
   * a call runs the request context's promise hooks).
   */
  getKept(ns: string, id: string): F | null | undefined {
    const stamp = this.stamps.get(ns, ns)
    if (stamp === undefined || stamp === null) return undefined
    const listed = this.cache.get(ns)
    if (listed && listed.stamp === stamp) return listed.firewalls.find((fw) => fw.id === id) ?? null
    const single = this.singles.get(singleKey(ns, id))
    return single && single.stamp === stamp ? single.firewall : undefined
  }

  /** What `list` would answer when it needs no read and no turn (see `getKept`); undefined otherwise. */
  listKept(ns: string): F[] | undefined {
    const stamp = this.stamps.get(ns, ns)
    if (stamp === undefined || stamp === null) return undefined
    const cached = this.cache.get(ns)
    return cached && cached.stamp === stamp ? cached.firewalls : undefined
  }

  /**
   * Every live firewall of the namespace. Served from a per-process cache while the
   * namespace's write stamp is unchanged, so a list costs one small read.
   */
  async list(ns: string): Promise<F[]> {
    const stamp = await this.stampOf(ns)
    const cached = this.cache.get(ns)
    if (cached && stamp !== null && cached.stamp === stamp) return cached.firewalls
    const firewalls = await this.load(ns)
    if (stamp !== null) this.cache.set(ns, { stamp, firewalls })
    return firewalls
  }

  private async load(ns: string): Promise<F[]> {
    const index = await this.backend.keyValue.get<FIndex>(keys.firewallIndex(ns))
    this.indexes.set(ns, { index })
    const live = Object.entries(index?.items ?? {}).filter(([, entry]) => entry.deletedAtVersion === undefined)
    const docs = await this.backend.keyValue.getMany<F>(live.map(([id]) => keys.firewall(ns, id)))
    return live
      .map(([id], index) => docs[index] && this.open(ns, id, docs[index]))
      .filter((doc): doc is F => doc !== null)
      .sort((a, b) => a.id.localeCompare(b.id))
  }

  async getVersion(ns: string, id: string, version: number): Promise<FirewallVersion<F, A> | null> {
    const entry = await this.backend.keyValue.get<FirewallVersion<F, A>>(keys.firewallVersion(ns, id, version))
    return entry && this.openVersion(ns, id, entry)
  }

  /**
   * The first version of the firewall's current life. Versions below it belong to a deleted
   * firewall of the same id: whoever creates the id again must not read or restore them.
   */
  async firstVersion(ns: string, id: string): Promise<number> {
    const items = (await this.backend.keyValue.get<FIndex>(keys.firewallIndex(ns)))?.items ?? {}
    return (Object.hasOwn(items, id) ? items[id]!.createdAtVersion : undefined) ?? 1
  }

  /** History newest first, starting below `beforeVersion` when given. */
  async history(
    ns: string,
    id: string,
    latest: number,
    limit: number,
    beforeVersion?: number,
  ): Promise<FirewallVersion<F, A>[]> {
    const top = Math.min(latest, (beforeVersion ?? latest + 1) - 1)
    const versions: number[] = []
    for (let v = top; v >= 1 && versions.length < limit; v--) versions.push(v)
    const entries = await this.backend.keyValue.getMany<FirewallVersion<F, A>>(
      versions.map((v) => keys.firewallVersion(ns, id, v)),
    )
    return entries
      .filter((entry): entry is FirewallVersion<F, A> => entry !== null)
      .map((entry) => this.openVersion(ns, id, entry))
  }

  /** The current values of keys a `mutate` will watch, read outside it (for a preview). */
  async readWatched(watch: string[]): Promise<Map<string, unknown>> {
    const values = await this.backend.keyValue.getMany<unknown>(watch)
    return new Map(watch.map((key, i) => [key, values[i]] as const))
  }

  /**
   * Atomic change of one firewall: `change` sees the current document (null when absent)
   * and returns the next one; the version is the previous one + 1 (continuing after a
   * deleted firewall of the same id), a history entry is appended and `also` writes go in
   * the same transaction. `watch` adds keys read and guarded by the same transaction
   * (e.g. exception requests an approval changes); `change` sees their values. `change` may be
   * async (a large document is judged taking turns with the rest of the process).
   */
  mutate<R>(
    ns: string,
    id: string,
    actor: A,
    now: string,
    change: (current: F | null, watched: Map<string, unknown>) => FirewallChange<F, R> | Promise<FirewallChange<F, R>>,
    watch: string[] = [],
  ): Promise<R> {
    const docKey = keys.firewall(ns, id)
    const indexKey = keys.firewallIndex(ns)
    let indexWritten: { index: FIndex } | undefined
    let docWritten: { stored: F; sealed: F } | null | undefined
    const committed = this.backend.keyValue.transact(
      [docKey, indexKey, ...watch],
      async (values) => {
        indexWritten = undefined
        docWritten = undefined
        const raw = values.get(docKey) as F | null
        const current = raw && this.open(ns, id, raw)
        const index = (values.get(indexKey) as FIndex | null) ?? { items: {} }
        this.indexes.set(ns, { index: values.get(indexKey) as FIndex | null })
        const { next, summary, also, result, unchanged } = await change(current, values)
        if (unchanged) return { writes: also?.(current, current) ?? {}, result: result(current) }
        // Own entries only: a firewall named `constructor` must not read Object's member.
        const lastVersion = current?.version ?? own(index.items, id)?.deletedAtVersion ?? 0
        const writes: TxWrites = { set: {}, delete: [] }
        let stored: F | null = null
        if (next) {
          stored = { ...next, version: lastVersion + 1, updatedAt: now }
          const sealed = this.seal(ns, id, stored)
          docWritten = { stored, sealed }
          writes.set![docKey] = sealed
          writes.set![keys.firewallVersion(ns, id, stored.version)] = {
            version: stored.version,
            updatedAt: now,
            actor,
            summary,
            config: sealed,
          } satisfies FirewallVersion<F, A>
          if (!current)
            indexWritten = { index: { items: { ...index.items, [id]: { createdAtVersion: stored.version } } } }
        } else if (current) {
          docWritten = null
          writes.delete!.push(docKey)
          indexWritten = { index: { items: { ...index.items, [id]: { deletedAtVersion: current.version } } } }
        }
        if (indexWritten) writes.set![indexKey] = indexWritten.index
        // A stamp: written after the documents and the index it stamps (see `get`'s ordered read).
        writes.stamps = {
          [keys.firewallStamp(ns)]: `${now}/${stored?.version ?? 'deleted'}/${Math.random().toString(36).slice(2)}`,
        }
        const extra = also?.(stored, current) ?? {}
        return {
          // Every process's kept stamp of the namespace ends when this commits.
          writes: { ...mergeWrites(writes, extra), announce: { ns, scope: 'firewalls' } },
          result: result(stored),
        }
      },
      { assume: watch.length === 0 ? this.assumed(ns, id) : undefined },
    )
    // This process's own kept stamp ended at the commit (the backend tells its listeners then).
    return committed.then((result) => {
      if (indexWritten) this.indexes.set(ns, indexWritten)
      if (docWritten) {
        this.sealedOf.set(docWritten.stored, docWritten.sealed)
        this.written.set(singleKey(ns, id), { firewall: docWritten.stored, at: this.now() })
      } else if (docWritten === null) this.written.delete(singleKey(ns, id))
      return result
    })
  }

  /**
   * The newest version of firewall `id` this process has read or written, whatever was announced
   * since (undefined when it knows none): what a write previews and assumes storage holds. Never
   * an answer to a reader: the write's transaction judges the stored document again and its
   * compare-and-set fails on anything newer, after which it reads (storage/redis/key-value.ts).
   */
  newestKnown(ns: string, id: string): F | undefined {
    const key = singleKey(ns, id)
    let newest: F | undefined
    for (const candidate of [
      this.written.get(key)?.firewall,
      this.singles.get(key)?.firewall ?? undefined,
      this.cache.get(ns)?.firewalls.find((fw) => fw.id === id),
    ])
      if (candidate && (!newest || candidate.version > newest.version)) newest = candidate
    return newest
  }

  /**
   * What a write's access check may judge without a read: `getKept`'s answer, else the document
   * this process itself stored within the interval it reuses a lookup for
   * (`RECENT_LOOKUP_LIMITS.ttlMs`), whatever was announced since; undefined otherwise. The write's
   * transaction judges the stored document again, so a grant removed through another process in
   * that interval is still refused; only an invalid body is then answered 400 before it.
   */
  keptForEdit(ns: string, id: string): F | null | undefined {
    const kept = this.getKept(ns, id)
    if (kept !== undefined) return kept
    const written = this.written.get(singleKey(ns, id))
    return written && this.now() - written.at < RECENT_LOOKUP_LIMITS.ttlMs ? written.firewall : undefined
  }

  /**
   * What storage most likely holds for firewall `id` and the namespace's index: the newest version
   * of the document this process keeps (sealed, as stored) and the index as last seen here. None
   * when either is unknown. The transaction's compare-and-set checks them like values it read.
   */
  private assumed(ns: string, id: string): Map<string, unknown> | undefined {
    const index = this.indexes.get(ns)
    if (!index) return undefined
    const newest = this.newestKnown(ns, id)
    const sealed = newest && this.sealedOf.get(newest)
    if (!sealed) return undefined
    return new Map<string, unknown>([
      [keys.firewall(ns, id), sealed],
      [keys.firewallIndex(ns), index.index],
    ])
  }
}
