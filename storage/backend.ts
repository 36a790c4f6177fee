import type { StoredEvent } from './model/events'
import { keys } from './repositories/keys'

/** One entry of an append-only log (event log, audit log, firewall log). */
export interface LogEntry<T = unknown> {
  /** Opaque, ordered cursor of the entry within its log. */
  cursor: string
  /** When it was written (ms epoch): what retention judges it by. */
  time: number
  value: T
}

export interface LogRangeOptions {
  /** Entries strictly after this cursor (oldest first). */
  after?: string | null
  /** Entries strictly before this cursor (newest first). */
  before?: string | null
  limit: number
  /** Newest first (default for `before`), oldest first otherwise. */
  newestFirst?: boolean
}

/** What a transaction writes: `null` deletes a key. */
export interface TxWrites {
  set?: Record<string, unknown>
  delete?: string[]
  /** Appended to logs atomically with the writes: log name -> entries. */
  logs?: Record<string, unknown[]>
  /**
   * Events appended to their namespace's event log (the outbox) atomically with the writes. All
   * of one namespace, the namespace of the transaction's keys (see `eventLogOf`).
   */
  events?: StoredEvent[]
}

export interface TxOptions {
  /**
   * What the caller knows the keys hold (the values it wrote last, null for absent), for every
   * key of the transaction: a backend that reads over the network may run the body on these
   * without reading first. The write still commits only when they are current; when they are
   * not (or the body throws on them), the transaction reads and runs the body again.
   */
  assume?: Map<string, unknown>
}

/** The result of a transaction body: the writes and what the caller gets back. */
export interface TxOutcome<R> {
  writes: TxWrites
  result: R
}

/**
 * The storage backend: unstorage for plain keys plus the few atomic primitives the
 * domain needs. Two implementations: Redis (several processes) and single-process
 * (unstorage fs or memory driver with in-process locks).
 */
export interface Backend {
  readonly kind: 'redis' | 'local'
  get<T>(key: string): Promise<T | null>
  getMany<T>(keys: string[]): Promise<(T | null)[]>
  has(key: string): Promise<boolean>
  /** Raw bytes (cached tarballs, compressed snapshots): stored as they are, not as JSON. */
  getBytes(key: string): Promise<Buffer | null>
  setBytes(key: string, bytes: Uint8Array): Promise<void>
  set(key: string, value: unknown): Promise<void>
  delete(key: string): Promise<void>
  keys(prefix: string): Promise<string[]>
  /**
   * Renames one stored key (a value, or on Redis a whole log or queue as `log:<name>`): for
   * layout migrations. When `to` already exists (an earlier run copied it), `from` is dropped.
   * False when `from` does not exist.
   */
  moveKey(from: string, to: string): Promise<boolean>

  /**
   * Atomic read-modify-write: `body` sees the current values of `keys` and returns the
   * writes; conflicting concurrent writers (other processes on Redis) cause a re-run.
   * Throwing from `body` aborts with nothing written.
   */
  transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
    options?: TxOptions,
  ): Promise<R>

  /** Appends entries to a log; returns their cursors. */
  logAppend(log: string, entries: unknown[]): Promise<string[]>
  logRange<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]>
  /** Drops entries written before `beforeMs` (retention). Returns how many were removed, when known. */
  logTrimBefore(log: string, beforeMs: number): Promise<number>
  logLength(log: string): Promise<number>

  /**
   * Appends entries dated `time` (ms epoch) instead of now: for a migration moving entries
   * between logs with their age, so retention still judges them by it. Times never go back: an
   * entry older than the log's newest is dated like it (Redis stream ids only grow).
   */
  logAppendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]>

  /**
   * Every item of a queue, oldest first. Only the storage migration reads queues: releases
   * before events were stored once kept per-webhook buffers in them; nothing writes one now.
   */
  queueItems<T>(queue: string): Promise<T[]>

  /** Acquire or renew a lease for `owner`; false when another owner holds it. */
  leaseAcquire(name: string, owner: string, ttlMs: number): Promise<boolean>
  leaseRelease(name: string, owner: string): Promise<void>
  leaseOwner(name: string): Promise<string | null>

  /** Atomic counter. */
  increment(key: string, by?: number): Promise<number>

  /** Called (in this process) with the namespace after events were appended to its log, by any process. */
  onEvents(listener: (ns: string) => void): () => void
  /** Resolves once notifications registered with `onEvents` are being received. */
  eventsReady(): Promise<void>

  ping(): Promise<boolean>
  close(): Promise<void>
}

/**
 * The event log a transaction's events go to: the log of their namespace. Every event must
 * belong to one namespace, and so must every namespace key of the transaction, so that the whole
 * write stays inside one namespace (one Redis Cluster slot). Throws on a violation: a bug.
 */
export function eventLogOf(txKeys: readonly string[], writes: TxWrites): { ns: string; log: string } | null {
  const events = writes.events ?? []
  if (events.length === 0) return null
  const ns = events[0].namespace
  const stray = events.find((event) => event.namespace !== ns)
  if (stray) throw new Error(`events of namespaces ${ns} and ${stray.namespace} in one transaction`)
  const written = [...txKeys, ...Object.keys(writes.set ?? {}), ...(writes.delete ?? [])]
  const foreign = written.find((key) => {
    const owner = keys.namespaceOfKey(key)
    return owner !== null && owner !== ns
  })
  if (foreign) throw new Error(`events of namespace ${ns} in a transaction on ${foreign}`)
  return { ns, log: keys.eventLog(ns) }
}

/** Thrown when a transaction keeps conflicting (should not happen in practice). */
export class TransactionConflictError extends Error {
  constructor(keys: string[]) {
    super(`transaction on ${keys.join(', ')} kept conflicting`)
  }
}
