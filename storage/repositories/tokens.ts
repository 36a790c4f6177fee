import type { Backend } from '../backend'
import { mapOf, recordOf } from '../own'
import { keys } from './keys'
import { RECENT_LOOKUP_LIMITS, RecentLookups, followChanges } from './recent-lookups'

export interface TokenRecord {
  id: string
  hash: string
  kind: 'personal' | 'service'
  namespace: string
  name: string
  prefix: string
  /** The user a personal token acts as, or the service principal id of a service token. */
  principalId: string
  /** Service tokens carry their own permission list. */
  permissions?: string[]
  createdBy: string
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt?: string
  /** Minted by a provider sign-in for one dashboard session: ends with it, left out of token lists. */
  dashboardSession?: true
}

/** Stored as `{ "items": { "<token id>": "<hash>" } }`; read as a Map (token ids come from request paths). */
interface TokenIndex {
  items: Record<string, string>
}

const indexOf = (doc: unknown): Map<string, string> => mapOf<string>((doc as TokenIndex | null)?.items)
const storedIndex = (index: Map<string, string>): TokenIndex => ({ items: recordOf(index) })

/** What authenticating a call in a namespace reads (see `findForNamespace`). */
export interface TokenLookup {
  token: TokenRecord | null
  namespace: unknown
  teams: unknown
}

/** Tokens are stored under the hash of their material; the namespace keeps an id -> hash index. */
export class TokenRepository {
  /**
   * Lookups of live tokens, reused for a short time (#27: every API call authenticates). Ended
   * by an `access` announcement of the namespace (a revocation, a team change): in the process
   * that made the change at its commit, in the others when the message arrives. Not by a firewall
   * write's announcement, nor by events appended alone. Kept only while the notifications are
   * live: one missed ends them all.
   */
  private readonly recent: RecentLookups<TokenLookup>
  private listening: (() => void) | null = null

  constructor(
    private readonly backend: Pick<Backend, 'keyValue' | 'signals'>,
    limits: { ttlMs: number; max: number } = RECENT_LOOKUP_LIMITS,
    now?: () => number,
  ) {
    this.recent = new RecentLookups(limits, now)
  }

  /**
   * What authenticating a call in `ns` needs, in one round trip: the token under `hash`, the
   * namespace record and its teams document (raw: the caller reads it defensively). Read again
   * at most `RECENT_LOOKUP_LIMITS.ttlMs` after the last read, unless something in `ns` changed.
   * The objects are shared between calls: callers only read them.
   */
  findForNamespace(hash: string, ns: string): Promise<TokenLookup> {
    this.listening ??= followChanges(this.backend.signals, this.recent, 'access')
    return this.recent.through(
      `${hash}\n${ns}`,
      ns,
      async () => {
        const [token, namespace, teams] = await this.backend.keyValue.getMany<unknown>([
          keys.token(hash),
          keys.namespace(ns),
          keys.teams(ns),
        ])
        return { token: token as TokenRecord | null, namespace, teams }
      },
      // Unknown tokens are not kept: a flood of made-up ones must not push out the live ones.
      (found) => found.token !== null && this.backend.signals.eventsLive(),
    )
  }

  findByHash(hash: string): Promise<TokenRecord | null> {
    return this.backend.keyValue.get<TokenRecord>(keys.token(hash))
  }

  async list(ns: string): Promise<TokenRecord[]> {
    const index = indexOf(await this.backend.keyValue.get<TokenIndex>(keys.tokenIndex(ns)))
    const records = await this.backend.keyValue.getMany<TokenRecord>([...index.values()].map(keys.token))
    return records.filter((record): record is TokenRecord => record !== null && !record.revokedAt)
  }

  async findById(ns: string, id: string): Promise<TokenRecord | null> {
    const hash = indexOf(await this.backend.keyValue.get<TokenIndex>(keys.tokenIndex(ns))).get(id)
    return hash ? this.findByHash(hash) : null
  }

  /**
   * The token record lives outside the namespace (it is found by hash alone), so it and the
   * namespace's index are two writes, ordered so that a crash between them leaves nothing
   * usable unlisted: the index entry first (an entry without a record is skipped when listing).
   */
  async create(record: TokenRecord): Promise<void> {
    const indexKey = keys.tokenIndex(record.namespace)
    await this.backend.keyValue.transact([indexKey], (values) => {
      const index = indexOf(values.get(indexKey)).set(record.id, record.hash)
      return { writes: { set: { [indexKey]: storedIndex(index) } }, result: undefined }
    })
    await this.backend.keyValue.set(keys.token(record.hash), record)
  }

  /**
   * Marks the token revoked (it then answers 401) and drops it from the list: revoked first,
   * so a crash in between leaves a revoked token that listing already skips.
   */
  async revoke(record: TokenRecord, at: string): Promise<void> {
    const key = keys.token(record.hash)
    await this.backend.keyValue.transact([key], (values) => {
      const current = (values.get(key) as TokenRecord | null) ?? record
      // Announced: every process ends its reuse of the token's lookups when the revocation commits.
      return {
        writes: { set: { [key]: { ...current, revokedAt: at } }, announce: { ns: record.namespace, scope: 'access' } },
        result: undefined,
      }
    })
    // The announcement ended this process's lookups of the namespace at the commit: the token is
    // refused from here on.
    const indexKey = keys.tokenIndex(record.namespace)
    await this.backend.keyValue.transact([indexKey], (values) => {
      const index = indexOf(values.get(indexKey))
      index.delete(record.id)
      return { writes: { set: { [indexKey]: storedIndex(index) } }, result: undefined }
    })
  }

  /** Records last use; atomic so that it never undoes a concurrent revocation. */
  touch(record: TokenRecord, at: string): Promise<void> {
    const key = keys.token(record.hash)
    return this.backend.keyValue.transact([key], (values) => {
      const current = values.get(key) as TokenRecord | null
      if (!current || current.revokedAt) return { writes: {}, result: undefined }
      return { writes: { set: { [key]: { ...current, lastUsedAt: at } } }, result: undefined }
    })
  }
}
