/**
 * The start of every key of namespace `ns`. `{ns}` is the key's Redis Cluster hash tag: all of
 * a namespace's keys, logs and queues share one slot, so a transaction or Lua script within one
 * namespace runs on one node. Only keys outside any namespace (tokens by hash, sessions, caches,
 * leases) live elsewhere, and those are only ever read or written one key at a time.
 */
const inNs = (ns: string) => `ns:{${ns}}`

/**
 * Every storage key, log, queue, lease and channel name, in one place (#12): whoever renames one
 * sees all the others. Ids never contain ':' (webhook ids not '/' either), nor '{' or '}'.
 * The layout before hash tags (`ns:<ns>:...`) is migrated at start: storage/migrations/.
 */
export const keys = {
  namespace: (ns: string) => `${inNs(ns)}:meta`,
  /** Prefix every namespace key starts with (the namespace-index migration and key rotation scan it). */
  namespacePrefix: 'ns',
  /** Every namespace id: `{ items: { [id]: true } }`, so listing them scans nothing. */
  namespaceIndex: 'namespaces',
  /** The namespace id of a `namespace(ns)` key; null for any other key. */
  namespaceOfMetaKey: (key: string): string | null => /^ns:\{([^:{}]+)\}:meta$/.exec(key)?.[1] ?? null,
  /** The namespace a namespaced key (`ns:{<ns>}:...`) belongs to; null for a global key. */
  namespaceOfKey: (key: string): string | null => /^ns:\{([^:{}]+)\}:/.exec(key)?.[1] ?? null,
  /** A namespace key split into its namespace and the parts after it; null for any other key. */
  parseNamespaceKey: (key: string): { ns: string; parts: string[] } | null => {
    const match = /^ns:\{([^:{}]+)\}:(.+)$/.exec(key)
    return match ? { ns: match[1], parts: match[2].split(':') } : null
  },
  users: (ns: string) => `${inNs(ns)}:users`,
  teams: (ns: string) => `${inNs(ns)}:teams`,
  licenseSets: (ns: string) => `${inNs(ns)}:license-sets`,
  tokenIndex: (ns: string) => `${inNs(ns)}:tokens`,
  /** Outside the namespace (found by hash alone): written apart from the namespace's index. */
  token: (hash: string) => `token:${hash}`,
  firewallIndex: (ns: string) => `${inNs(ns)}:fw-index`,
  /** Changes with every firewall write of the namespace: lets readers keep a cache. */
  firewallStamp: (ns: string) => `${inNs(ns)}:fw-stamp`,
  firewall: (ns: string, id: string) => `${inNs(ns)}:fw:${id}`,
  firewallVersion: (ns: string, id: string, version: number) => `${inNs(ns)}:fw-history:${id}:${version}`,
  exceptionRequest: (ns: string, fw: string, id: string) => `${inNs(ns)}:exr:${fw}:${id}`,
  /** One index document per firewall; every change rewrites it, which also serialises decisions. */
  exceptionRequestIndex: (ns: string, fw: string) => `${inNs(ns)}:exr-index:${fw}`,
  /** A dashboard session's server-side record (its id travels inside the sealed cookie). */
  dashboardSession: (id: string) => `dashboard-session:${id}`,
  dashboardSessionPrefix: 'dashboard-session:',
  /** The generated password dashboard cookies are sealed with (when DASHBOARD_SESSION_SECRET is unset). */
  dashboardSessionSecret: 'dashboard:session-secret',
  /** A value sealed with SECRETS_KEY at first start: a wrong key is noticed before serving. */
  secretsKeyCheck: 'secrets:key-check',
  /** Registry proxy cache: packuments by upstream scope and name (hashed), tarballs by integrity (hashed). */
  registryPackument: (scopeHash: string, nameHash: string) => `regcache:pkm:${scopeHash}:${nameHash}`,
  registryTarball: (integrityHash: string) => `regcache:tgz:${integrityHash}`,
  /** Advisory feed state of one ecosystem (validators, figures, the current snapshot's id). */
  advisoryFeed: (ecosystem: string) => `advisories:feed:${ecosystem}`,
  /** A loaded feed, compressed; one per ecosystem (the previous is deleted once replaced). */
  advisorySnapshot: (ecosystem: string, id: string) => `advisories:snapshot:${ecosystem}:${id}`,
  /** Lease held by the process that downloads an ecosystem's feed. */
  advisoryFeedLease: (ecosystem: string) => `advisory-feed:${ecosystem}`,
  /**
   * A package's served versions in a namespace, every firewall's (storage/model/inventory.ts):
   * the exposure match reads it by name. `nameKey` is the ecosystem's normalized name, encoded so
   * that `/`, `:` and `@` of package names never split the key.
   */
  inventoryPackage: (ns: string, ecosystem: string, nameKey: string) =>
    `${inNs(ns)}:inv:${ecosystem}:${encodeURIComponent(nameKey)}`,
  /** The packages one firewall served: `{ items: { "<ecosystem>:<encoded name key>": true } }`. */
  inventoryIndex: (ns: string, fw: string) => `${inNs(ns)}:inv-index:${fw}`,
  /** One exposure (a served version an advisory names), by its derived id. */
  exposure: (ns: string, id: string) => `${inNs(ns)}:exp:${id}`,
  /** The namespace's exposures: `{ items: { [id]: { firewall, status, detectedAt } } }`. */
  exposureIndex: (ns: string) => `${inNs(ns)}:exp-index`,
  /** Log names (entries carry their own time). Each namespace's events are stored once, in its own log. */
  eventLog: (ns: string) => `${inNs(ns)}:events`,
  auditLog: (ns: string) => `${inNs(ns)}:audit`,
  firewallLog: (ns: string, id: string) => `${inNs(ns)}:fwlog:${id}`,
  /** Leases. */
  retentionLease: 'log-retention',
  /** Held by the process migrating the storage layout at start (storage/migrations/). */
  migrationLease: 'storage-migration',
  /** The layout version the stored data is in: `{ version }`. */
  storageLayout: 'storage:layout',
  // Redis keys and channels below the backend's prefix (raw Redis, outside unstorage).
  /** One fixed window's count, first and last call (a hash); a subject's windows share a hash tag (read together, one Lua script). */
  rateWindow: (subject: string, windowMs: number, window: number) => `ratelimit:{${subject}}:${windowMs}:${window}`,
  /** Base of a subject's two refusal keys (`:pending`, `:gate`, one Lua script): its own hash tag. */
  refusalTally: (subject: string) => `refusals:{${subject}}`,
  /** Published (message: the namespace) after events were appended to a namespace's log, or a change announced. */
  eventsChannel: 'events-notify',
  /** Published (message: `<scope>:<namespace>`) after a transaction announced a change (`TxWrites.announce`). */
  changesChannel: 'changes-notify',
  webhookSignalsChannel: 'wh-signals',
}

/** Storage keys, queue, log and lease names of the webhook engine. Ids never contain ':' or '/'. */
export const webhookKeys = {
  /** Index of a namespace's webhooks: `{ items: { [id]: true } }`. */
  index: (ns: string) => `${inNs(ns)}:wh-index`,
  /** Every webhook of every namespace (the delivery host restores all of them): `{ items: { "ns/id": true } }`. */
  globalIndex: () => 'wh-all',
  /** The processes delivering webhooks and until when each counts (webhook-hosts.ts): `{ [owner]: ms }`. */
  hosts: () => 'wh-hosts',
  webhook: (ns: string, id: string) => `${inNs(ns)}:wh:${id}`,
  /** Persisted XState snapshot of the webhook's delivery actor. */
  snapshot: (ns: string, id: string) => `${inNs(ns)}:wh-snapshot:${id}`,
  /**
   * Where the webhook stands in its namespace's event log, and the batch in flight (delivery id,
   * event ids, log range): its buffer is the matching events after the cursor (docs/webhooks.md).
   */
  cursor: (ns: string, id: string) => `${inNs(ns)}:wh-cursor:${id}`,
  /** The newest delivery ids, the sealed pages' numbers and the oldest ids kept (delivery-index.ts). */
  deliveryIndex: (ns: string, id: string) => `${inNs(ns)}:wh-deliveries:${id}`,
  /** A sealed page of the delivery index: `{ ids }`, written once. */
  deliveryIndexPage: (ns: string, id: string, page: number) => `${inNs(ns)}:wh-deliveries-page:${id}:${page}`,
  delivery: (ns: string, id: string, deliveryId: string) => `${inNs(ns)}:wh-delivery:${id}:${deliveryId}`,
  /** Every attempt of one delivery, oldest first; kept and dropped with its delivery record. */
  deliveryAttempts: (ns: string, id: string, deliveryId: string) => `${inNs(ns)}:wh-attempts:${id}:${deliveryId}`,
  metrics: (ns: string, id: string, bucket: string, start: number) => `${inNs(ns)}:wh-metrics:${id}:${bucket}:${start}`,
  /** Failed deliveries `recover` can reach beyond the kept records (failed-deliveries.ts). */
  failedDeliveries: (ns: string, id: string) => `${inNs(ns)}:wh-failed:${id}`,
  /** A failed delivery's record as it was when it failed, kept while the ledger lists it. */
  failedDelivery: (ns: string, id: string, deliveryId: string) => `${inNs(ns)}:wh-failed-delivery:${id}:${deliveryId}`,
  /** Redeliveries (resend, recover) waiting for the webhook's actor, oldest first. */
  redeliveries: (ns: string, id: string) => `${inNs(ns)}:wh-redeliveries:${id}`,
  /** Bucket starts stored for one webhook and bucket size (`{ starts }`): what the retention pass prunes. */
  metricsIndex: (ns: string, id: string, bucket: string) => `${inNs(ns)}:wh-metrics-index:${id}:${bucket}`,
  /** Lease: one owner per webhook actor. */
  webhookLease: (ns: string, id: string) => `webhook:${ns}:${id}`,
}
