import { newId } from '../common/ids'
import type { Clock } from '../common/clock'
import type { EventType, NamespaceEvent } from './schemas'

/** A new namespace event with an `evt-` id and an ISO 8601 UTC time. */
export function makeEvent<D>(clock: Clock, namespace: string, type: EventType, data: D): NamespaceEvent<D> {
  const now = clock.now()
  return { id: newId('evt', now), type, time: new Date(now).toISOString(), namespace, data }
}

/** Drops undefined and empty-string fields, for "when set" fields of event data. */
export function compact<T extends Record<string, unknown>>(data: T): T {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined && value !== '')) as T
}
