/**
 * Every storage key, log, queue, lease and channel name, in one place (#12): whoever renames one
 * sees all the others. Ids never contain ':' (webhook ids not '/' either).
 */
export const keys = {
  namespace: (ns: string) => `ns:${ns}:meta`,
  /** Prefix every namespace key starts with (namespace listing scans it). */
  namespacePrefix: 'ns',
  /** The namespace id of a `namespace(ns)` key; null for any other key. */
  namespaceOfMetaKey: (key: string): string | null => /^ns:([^:]+):meta$/.exec(key)?.[1] ?? null,
  /** The namespace a namespaced key (`ns:<ns>:...`) belongs to; null for a global key. */
  namespaceOfKey: (key: string): string | null => /^ns:\{?([^:{}]+)\}?:/.exec(key)?.[1] ?? null,
  users: (ns: string) => `ns:${ns}:users`,
  teams: (ns: string) => `ns:${ns}:teams`,
  licenseSets: (ns: string) => `ns:${ns}:license-sets`,
  tokenIndex: (ns: string) => `ns:${ns}:tokens`,
  token: (hash: string) => `token:${hash}`,
  firewallIndex: (ns: string) => `ns:${ns}:fw-index`,
  /** Changes with every firewall write of the namespace: lets readers keep a cache. */
  firewallStamp: (ns: string) => `ns:${ns}:fw-stamp`,
  firewall: (ns: string, id: string) => `ns:${ns}:fw:${id}`,
  firewallVersion: (ns: string, id: string, version: number) => `ns:${ns}:fw-history:${id}:${version}`,
  exceptionRequest: (ns: string, fw: string, id: string) => `ns:${ns}:exr:${fw}:${id}`,
  /** One index document per firewall; every change rewrites it, which also serialises decisions. */
  exceptionRequestIndex: (ns: string, fw: string) => `ns:${ns}:exr-index:${fw}`,
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
  /** Log names (entries carry their own time). Each namespace's events are stored once, in its own log. */
  eventLog: (ns: string) => `ns:${ns}:events`,
  auditLog: (ns: string) => `audit:${ns}`,
  firewallLog: (ns: string, id: string) => `fwlog:${ns}:${id}`,
  /** Leases. */
  retentionLease: 'log-retention',
  /** Redis keys and channels below the backend's prefix (raw Redis, outside unstorage). */
  rateWindow: (subject: string, windowMs: number, window: number) => `ratelimit:${subject}:${windowMs}:${window}`,
  refusalTally: (subject: string) => `refusals:${subject}`,
  /** Published (message: the namespace) after events were appended to a namespace's log. */
  eventsChannel: 'events-notify',
  webhookSignalsChannel: 'wh-signals',
}

/** Storage keys, queue, log and lease names of the webhook engine. Ids never contain ':' or '/'. */
export const webhookKeys = {
  /** Index of a namespace's webhooks: `{ items: { [id]: true } }`. */
  index: (ns: string) => `ns:${ns}:wh-index`,
  /** Every webhook of every namespace (the delivery host restores all of them): `{ items: { "ns/id": true } }`. */
  globalIndex: () => 'wh-all',
  webhook: (ns: string, id: string) => `ns:${ns}:wh:${id}`,
  /** Persisted XState snapshot of the webhook's delivery actor. */
  snapshot: (ns: string, id: string) => `ns:${ns}:wh-snapshot:${id}`,
  /**
   * Where the webhook stands in its namespace's event log, and the batch in flight (delivery id,
   * event ids, log range): its buffer is the matching events after the cursor (docs/webhooks.md).
   */
  cursor: (ns: string, id: string) => `ns:${ns}:wh-cursor:${id}`,
  deliveryIndex: (ns: string, id: string) => `ns:${ns}:wh-deliveries:${id}`,
  delivery: (ns: string, id: string, deliveryId: string) => `ns:${ns}:wh-delivery:${id}:${deliveryId}`,
  /** Every attempt of one delivery, oldest first; kept and dropped with its delivery record. */
  deliveryAttempts: (ns: string, id: string, deliveryId: string) => `ns:${ns}:wh-attempts:${id}:${deliveryId}`,
  metrics: (ns: string, id: string, bucket: string, start: number) => `ns:${ns}:wh-metrics:${id}:${bucket}:${start}`,
  /** Redeliveries (resend, recover) waiting for the webhook's actor, oldest first. */
  redeliveries: (ns: string, id: string) => `ns:${ns}:wh-redeliveries:${id}`,
  /** Bucket starts stored for one webhook and bucket size (`{ starts }`): what the retention pass prunes. */
  metricsIndex: (ns: string, id: string, bucket: string) => `ns:${ns}:wh-metrics-index:${id}:${bucket}`,
  /** Lease: one owner per webhook actor. */
  webhookLease: (ns: string, id: string) => `webhook:${ns}:${id}`,
}

/**
 * The layout before events were stored once per namespace (one global `events` log, a router
 * copying each event into per-webhook queues). Only the migration reads these.
 */
export const legacyEventKeys = {
  eventLog: 'events',
  routerCursor: 'wh-router-cursor',
  routerLease: 'webhook-router',
  buffer: (ns: string, id: string) => `wh-buffer:${ns}:${id}`,
  batch: (ns: string, id: string) => `ns:${ns}:wh-batch:${id}`,
}
