import { keys } from './repositories/keys'
import type { TxWrites } from './ports'

/** The port types (ports.ts), for the modules that import them from here. */

export type {
  Backend,
  CounterStore,
  KeyValueStore,
  LeaseStore,
  LegacyQueueReader,
  LogEntry,
  LogRangeOptions,
  LogStore,
  SignalBus,
  TxOptions,
  TxOutcome,
  TxWrites,
} from './ports'

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
  const written = [
    ...txKeys,
    ...Object.keys(writes.set ?? {}),
    ...Object.keys(writes.stamps ?? {}),
    ...(writes.delete ?? []),
  ]
  const foreign = written.find((key) => {
    const owner = keys.namespaceOfKey(key)
    return owner !== null && owner !== ns
  })
  if (foreign) throw new Error(`events of namespace ${ns} in a transaction on ${foreign}`)
  return { ns, log: keys.eventLog(ns) }
}

/**
 * The namespace whose `onEvents` listeners a transaction tells: its events' (see `eventLogOf`), or
 * the one it announces a change of (`TxWrites.announce`); null for neither. Throws when both name
 * namespaces and they differ: a bug.
 */
export function notifiedNamespace(eventLog: { ns: string } | null, writes: TxWrites): string | null {
  const announced = writes.announce?.ns
  if (eventLog && announced !== undefined && announced !== eventLog.ns)
    throw new Error(`a transaction of events of ${eventLog.ns} announces a change of ${announced}`)
  return eventLog?.ns ?? announced ?? null
}

/** Thrown when a transaction keeps conflicting (should not happen in practice). */
export class TransactionConflictError extends Error {
  constructor(keys: string[]) {
    super(`transaction on ${keys.join(', ')} kept conflicting`)
  }
}
