import type { StoredEvent } from './model/events'

/**
 * The storage ports, one per shape of data. Each has a single-process implementation
 * (storage/local/) and a Redis one (storage/redis/); `createBackend` (storage/index.ts) is the
 * one place that chooses between them. Repositories take the ports they use (`Pick<Backend, ...>`).
 */

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
  /**
   * Set like `set`, and read before the values they cover (a namespace's firewall write stamp,
   * read before the documents it stamps): a backend that writes values one by one (local files)
   * writes these after every other value of the transaction has landed, so that a reader who
   * finds the new stamp finds the new documents too.
   */
  stamps?: Record<string, unknown>
  delete?: string[]
  /** Appended to logs atomically with the writes: log name -> entries. */
  logs?: Record<string, unknown[]>
  /**
   * Events appended to their namespace's event log (the outbox) atomically with the writes. All
   * of one namespace, the namespace of the transaction's keys (see `eventLogOf`).
   */
  events?: StoredEvent[]
  /**
   * What this transaction changes that processes keep (a namespace's firewalls, or what
   * authenticating in it reads): every process's `SignalBus.onChanges` listeners are told (this
   * process's before `transact` resolves), and what they keep of it ends at once (#27).
   * `onEvents` listeners are told of the namespace too, even when it appends no events. When
   * events are appended too, they must be of this namespace. Events appended without it end no
   * cache: when they did, under load every call's audit event ended every process's kept
   * authentication reads and firewall stamps, and so did every firewall write.
   */
  announce?: ChangeAnnouncement
}

/**
 * What an announced change ends: the namespace's firewall documents (`firewalls`), or what
 * authenticating a call in it reads (`access`: a token, the teams).
 */
export type ChangeScope = 'firewalls' | 'access'

export interface ChangeAnnouncement {
  ns: string
  scope: ChangeScope
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

/** Plain values under keys, and atomic read-modify-write across keys of one namespace. */
export interface KeyValueStore {
  get<T>(key: string): Promise<T | null>
  /**
   * `ordered`: each value is read no earlier than the one before it (keys of one namespace), as
   * separate reads one after another would be: a value kept under a stamp read before it is then
   * never older than the stamp. Redis reads them in one round trip either way.
   */
  getMany<T>(keys: string[], options?: { ordered?: boolean }): Promise<(T | null)[]>
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
   * Throwing from `body` aborts with nothing written. The writes may append to logs and to the
   * namespace's event log in the same step (`TxWrites.logs`, `.events`), which wakes `SignalBus.onEvents`.
   */
  transact<R>(
    keys: string[],
    body: (values: Map<string, unknown>) => TxOutcome<R> | Promise<TxOutcome<R>>,
    options?: TxOptions,
  ): Promise<R>
}

/** Append-only logs (event, audit and firewall logs), read by cursor and trimmed by age. */
export interface LogStore {
  /** Appends entries; returns their cursors. */
  append(log: string, entries: unknown[]): Promise<string[]>
  /**
   * Appends entries dated `time` (ms epoch) instead of now: for a migration moving entries
   * between logs with their age, so retention still judges them by it. Times never go back: an
   * entry older than the log's newest is dated like it (Redis stream ids only grow).
   */
  appendAt(log: string, entries: { time: number; value: unknown }[]): Promise<string[]>
  range<T>(log: string, options: LogRangeOptions): Promise<LogEntry<T>[]>
  /** Drops entries written before `beforeMs` (retention). Returns how many were removed, when known. */
  trimBefore(log: string, beforeMs: number): Promise<number>
  length(log: string): Promise<number>
}

/** Named leases: one owner at a time, for a time. */
export interface LeaseStore {
  /** Acquire or renew a lease for `owner`; false when another owner holds it. */
  acquire(name: string, owner: string, ttlMs: number): Promise<boolean>
  release(name: string, owner: string): Promise<void>
  owner(name: string): Promise<string | null>
}

/** The calls counted in one fixed window: how many, and when the first and the last came (ms since epoch; 0 when none). */
export interface WindowCount {
  count: number
  first: number
  last: number
}

/**
 * One subject's calls counted in the fixed window `now` falls in and in the window just before
 * it, after a hit: what its sliding window is estimated from (storage/window-counts.ts).
 */
export interface WindowHits {
  /** Whether this call was counted: it fit under the limit. */
  counted: boolean
  /** The current window's calls, this one included when `counted`. */
  current: WindowCount
  previous: WindowCount
  /** Where the current window starts (ms since epoch, a multiple of the window's length). */
  windowStart: number
}

/**
 * Counts calls per subject in fixed windows, the current and the previous one; shared by every
 * process on one Redis. A call is counted only when it fits a sliding window of `limit` calls
 * (`fitsSlidingWindow`, storage/window-counts.ts), decided and counted in one atomic step, so
 * concurrent callers never pass the limit together. Refused calls are not counted.
 */
export interface RateCounter {
  hit(subject: string, limit: number, windowMs: number, now: number): Promise<WindowHits>
}

/**
 * Tallies refusals per subject so that a flood becomes one audit entry a window, not one a call.
 * `note` counts a refusal; when no report was made for the subject within `windowMs`, it returns
 * the number of refusals the report stands for (this one and any left over) and starts a new
 * window; otherwise 0. `flush` reports what is left once a window has passed.
 */
export interface RefusalTally {
  note(subject: string, windowMs: number): Promise<number>
  flush(subject: string, windowMs: number): Promise<number>
}

/** Counters: plain atomic ones, fixed-window rate counts and refusal tallies. */
export interface CounterStore extends RateCounter, RefusalTally {
  /** Atomic counter. */
  increment(key: string, by?: number): Promise<number>
}

/**
 * Wake-ups for delivery actors, which may live in another process: `changed` (document changed:
 * release, rotation, edit) and `deleted`. New events need no signal: the owner of each webhook
 * follows its namespace's event log. Signals are hints only: the delivery host also reconciles
 * from storage periodically, so a lost signal delays work but never loses it.
 */
export interface WebhookSignal {
  kind: 'changed' | 'deleted'
  /** `ns/id` references. */
  refs: string[]
}

export interface WebhookSignals {
  publish(signal: WebhookSignal): Promise<void>
  subscribe(listener: (signal: WebhookSignal) => void): () => void
  /** Drops every listener (a later `subscribe` listens again). */
  close(): Promise<void>
}

/** Notifications between processes: events appended to a namespace's log, and webhook signals. */
export interface SignalBus {
  /**
   * Called (in this process) with the namespace after events were appended to its log, or a
   * transaction announced a change of it (`TxWrites.announce`), by any process.
   */
  onEvents(listener: (ns: string) => void): () => void
  /**
   * Called (in this process) after a transaction announced a change (`TxWrites.announce`), by any
   * process: what is kept of it must be read again. For a transaction of this process, before its
   * `transact` resolves (so its caller never reads back what the change ended); a backend with
   * messages from other processes may tell it again when its own message comes back.
   */
  onChanges(listener: (change: ChangeAnnouncement) => void): () => void
  /** Resolves once notifications registered with `onEvents` and `onChanges` are being received. */
  eventsReady(): Promise<void>
  /**
   * Whether every notification is being received now: false before the first subscription is
   * confirmed and while a lost connection is being restored (notifications meanwhile are lost).
   * Only while it is true may a process keep what a notification would end.
   */
  eventsLive(): boolean
  /** Called whenever notifications may have been missed, and again once they are live after that. */
  onEventsMissed(listener: () => void): () => void
  readonly webhooks: WebhookSignals
}

/**
 * Queues of an old layout. Only the storage migration reads them: releases before events were
 * stored once kept per-webhook buffers in them; nothing writes one now.
 */
export interface LegacyQueueReader {
  /** Every item of a queue, oldest first. */
  items<T>(queue: string): Promise<T[]>
}

/**
 * The storage: its ports, and what start-up, readiness and shutdown need. Two implementations,
 * LocalBackend (one process: unstorage fs or memory driver with in-process locks) and
 * RedisBackend (several processes: one Redis or a Redis Cluster).
 */
export interface Backend {
  readonly kind: 'redis' | 'local'
  readonly keyValue: KeyValueStore
  readonly logs: LogStore
  readonly leases: LeaseStore
  readonly counters: CounterStore
  readonly signals: SignalBus
  readonly legacyQueues: LegacyQueueReader
  ping(): Promise<boolean>
  close(): Promise<void>
}
