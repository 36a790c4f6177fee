import type { Backend } from '../backend'
import type { StoredEvent } from '../model/events'

/**
 * The names releases before events were stored once gave the event layout (one global log, a
 * router copying each event into per-webhook queues), written out as they were: a migration
 * describes one fixed change. On fs a log or queue is one key per item (`<name>:<slot>`).
 */
export const legacyNames = {
  eventLog: 'events',
  routerCursor: 'wh-router-cursor',
  routerLease: 'lease:webhook-router',
  bufferPrefix: 'wh-buffer',
  buffer: (ns: string, id: string) => `wh-buffer:${ns}:${id}`,
  batch: (ns: string, id: string) => `ns:${ns}:wh-batch:${id}`,
}

/** The layout-2 names this conversion writes and reads beside them. */
export const taggedNames = {
  eventLog: (ns: string) => `ns:{${ns}}:events`,
  cursor: (ns: string, id: string) => `ns:{${ns}}:wh-cursor:${id}`,
  webhook: (ns: string, id: string) => `ns:{${ns}}:wh:${id}`,
  webhookIndex: 'wh-all',
}

/** One webhook's share of the old layout: its batch in flight and its buffer, oldest first. */
export interface LegacyWebhook {
  ns: string
  id: string
  batch: { deliveryId: string; items: StoredEvent[] } | null
  buffer: StoredEvent[]
}

/** Where the old layout left data: what the conversion reads and the clean-up removes. */
export interface LegacyState {
  /** Every webhook of the index whose document exists, with its batch and buffer (maybe empty). */
  webhooks: LegacyWebhook[]
  /** Last entry of the global log the router had copied into buffers; null when it never ran. */
  routed: string | null
  /** Buffers and batches found, of existing webhooks or not (deleted ones are only removed). */
  buffers: string[]
  batches: string[]
  /** True when anything of the old layout is stored. */
  present: boolean
}

export async function readLegacyState(backend: Backend): Promise<LegacyState> {
  const buffers = new Set<string>()
  for (const key of await backend.keyValue.keys(`queue:${legacyNames.bufferPrefix}`)) {
    const match = /^queue:wh-buffer:([^:]+):([^:]+)/.exec(key)
    if (match) buffers.add(legacyNames.buffer(match[1], match[2]))
  }
  const batches = (await backend.keyValue.keys('ns')).filter((key) => /^ns:[^:{}]+:wh-batch:[^:]+$/.test(key))
  const routed = (await backend.keyValue.get<{ cursor: string }>(legacyNames.routerCursor))?.cursor ?? null
  const present =
    buffers.size > 0 || batches.length > 0 || routed !== null || (await backend.logs.length(legacyNames.eventLog)) > 0
  const refs = Object.keys(
    (await backend.keyValue.get<{ items: Record<string, true> }>(taggedNames.webhookIndex))?.items ?? {},
  )
  const webhooks: LegacyWebhook[] = []
  for (const ref of refs.sort()) {
    const [ns, id] = ref.split('/')
    if (!(await backend.keyValue.has(taggedNames.webhook(ns, id)))) continue
    const batch = await backend.keyValue.get<LegacyWebhook['batch']>(legacyNames.batch(ns, id))
    const buffer = await backend.legacyQueues.items<StoredEvent>(legacyNames.buffer(ns, id))
    webhooks.push({ ns, id, batch, buffer })
  }
  return { webhooks, routed, buffers: [...buffers], batches, present }
}

/** Removes every key of the old layout; returns how many names were removed. */
export async function removeLegacyState(backend: Backend, state: LegacyState): Promise<number> {
  const lists = [...state.buffers.map((buffer) => `queue:${buffer}`), `log:${legacyNames.eventLog}`]
  const values = [...state.batches, legacyNames.routerCursor, legacyNames.routerLease]
  for (const list of lists) {
    // One key on Redis; on fs one key per item below `<name>:`.
    if (backend.kind === 'redis') await backend.keyValue.delete(list)
    else for (const key of await backend.keyValue.keys(list)) await backend.keyValue.delete(key)
  }
  for (const key of values) await backend.keyValue.delete(key)
  return lists.length + values.length
}
