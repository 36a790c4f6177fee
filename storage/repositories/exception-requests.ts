import type { Backend, TxWrites } from '../backend'
import type { StoredEvent } from '../model/events'
import { ownRecord } from '../own'
import { keys } from './keys'

/**
 * What the index reads of a proposed exception: its rule and package selector. The whole exception
 * is the domain's (server/firewall/schema.ts, `Exception`), stored as it is given.
 */
export interface ProposedException {
  rule: string
  selector: { packageName: string; version?: string }
}

/** The immutable part of an exception request, fixed at creation. */
export interface ExceptionRequestRecord<X extends ProposedException = ProposedException> {
  id: string
  firewallId: string
  proposedException: X
  justification: string
  requestedBy: string
  requestedAt: string
}

/**
 * One request as stored: the record plus the persisted snapshot of its actor. The status and
 * decision fields live only in the snapshot, so the two can never disagree.
 */
export interface StoredExceptionRequest<X extends ProposedException = ProposedException> {
  record: ExceptionRequestRecord<X>
  snapshot: unknown
}

/** What listing and the "identical pending requests" lookup need, without loading every request. */
export interface IndexEntry {
  status: string
  requestedBy: string
  rule: string
  packageName: string
  version?: string
}

/**
 * Request id -> entry. Stored as a plain JSON object; read back without a prototype (see `ownRecord`),
 * so `index[id]` for an id from a request path such as `constructor` finds nothing rather than Object's.
 */
export type RequestIndex = Record<string, IndexEntry>

const indexOf = (doc: unknown): RequestIndex => ownRecord<IndexEntry>((doc as { items?: unknown } | null)?.items)

/** Storage keys of this repository (defined with every other key in keys.ts). */
export const exceptionRequestKeys = { request: keys.exceptionRequest, index: keys.exceptionRequestIndex }

/** A changed request and its status after the change (the status is the snapshot's, given by the caller). */
export interface ChangedRequest<X extends ProposedException = ProposedException> {
  stored: StoredExceptionRequest<X>
  status: string
}

interface ListFilter {
  statuses?: readonly string[]
  /** Only requests of this principal (a requester without `fw:read`). */
  requestedBy?: string
  limit: number
  /** Exclusive: ids after this one (ids are time-ordered). */
  after?: string
}

/** Exception requests per firewall: one document per request plus one index document. `X`: the domain's exception. */
export class ExceptionRequestRepository<X extends ProposedException = ProposedException> {
  constructor(private readonly backend: Pick<Backend, 'keyValue'>) {}

  get(ns: string, fw: string, id: string): Promise<StoredExceptionRequest<X> | null> {
    return this.backend.keyValue.get<StoredExceptionRequest<X>>(exceptionRequestKeys.request(ns, fw, id))
  }

  async index(ns: string, fw: string): Promise<RequestIndex> {
    return indexOf(await this.backend.keyValue.get<{ items: RequestIndex }>(exceptionRequestKeys.index(ns, fw)))
  }

  /** One page, oldest first, and the cursor of the next page (null at the end). */
  async list(
    ns: string,
    fw: string,
    filter: ListFilter,
  ): Promise<{ items: StoredExceptionRequest<X>[]; next: string | null }> {
    const index = await this.index(ns, fw)
    const ids = Object.entries(index)
      .filter(
        ([id, entry]) =>
          (filter.after === undefined || id > filter.after) &&
          (!filter.statuses?.length || filter.statuses.includes(entry.status)) &&
          (filter.requestedBy === undefined || entry.requestedBy === filter.requestedBy),
      )
      .map(([id]) => id)
      .sort()
    const page = ids.slice(0, filter.limit)
    const docs = await this.backend.keyValue.getMany<StoredExceptionRequest<X>>(
      page.map((id) => exceptionRequestKeys.request(ns, fw, id)),
    )
    const items = docs.filter((doc): doc is StoredExceptionRequest<X> => doc !== null)
    return { items, next: ids.length > page.length ? page.at(-1)! : null }
  }

  /** Index and request values out of a transaction's value map. */
  read(values: Map<string, unknown>, ns: string, fw: string, ids: string[]) {
    const index = indexOf(values.get(exceptionRequestKeys.index(ns, fw)))
    const requests = new Map(
      ids.map((id) => [
        id,
        (values.get(exceptionRequestKeys.request(ns, fw, id)) ?? null) as StoredExceptionRequest<X> | null,
      ]),
    )
    return { index, requests }
  }

  /** Writes for changed requests: their documents and the updated index, for one transaction. */
  writesFor(ns: string, fw: string, index: RequestIndex, changed: ChangedRequest<X>[]): TxWrites {
    const set: Record<string, unknown> = {}
    const items = ownRecord<IndexEntry>(index)
    for (const { stored, status } of changed) {
      const { id, requestedBy, proposedException } = stored.record
      set[exceptionRequestKeys.request(ns, fw, id)] = stored
      items[id] = {
        status,
        requestedBy,
        rule: proposedException.rule,
        packageName: proposedException.selector.packageName,
        ...(proposedException.selector.version !== undefined ? { version: proposedException.selector.version } : {}),
      }
    }
    // Stored as an ordinary object, in the same layout as before.
    set[exceptionRequestKeys.index(ns, fw)] = { items: { ...items } }
    return { set }
  }

  /**
   * Atomic change of some requests of one firewall: `body` sees the index and the named
   * requests (plus any `extraKeys`) and returns the changed requests and events to write.
   */
  change<R>(
    ns: string,
    fw: string,
    ids: string[],
    body: (state: {
      index: RequestIndex
      requests: Map<string, StoredExceptionRequest<X> | null>
      values: Map<string, unknown>
    }) => {
      changed: ChangedRequest<X>[]
      events: StoredEvent[]
      result: R
    },
    extraKeys: string[] = [],
  ): Promise<R> {
    const keys = [
      exceptionRequestKeys.index(ns, fw),
      ...ids.map((id) => exceptionRequestKeys.request(ns, fw, id)),
      ...extraKeys,
    ]
    return this.backend.keyValue.transact(keys, (values) => {
      const { index, requests } = this.read(values, ns, fw, ids)
      const { changed, events, result } = body({ index, requests, values })
      return { writes: { ...this.writesFor(ns, fw, index, changed), events }, result }
    })
  }
}
