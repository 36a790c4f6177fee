/**
 * An event as the event log stores it (the outbox). Storage reads only `id`, `time` and
 * `namespace`; the domain fills in the type names and data it publishes (server/events/schemas.ts,
 * `NamespaceEvent`).
 */
export interface StoredEvent<Type extends string = string, Data = Record<string, unknown>> {
  id: string
  type: Type
  time: string
  namespace: string
  data: Data
}
