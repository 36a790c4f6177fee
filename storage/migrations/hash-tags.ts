import type { Backend } from '../backend'

/**
 * Layout 1 -> 2: every key and log of a namespace carries the hash tag `{ns}`, so that a Redis
 * Cluster keeps a namespace in one slot. The names on both sides are written out here, not
 * taken from keys.ts: a migration describes one fixed change, whatever keys.ts says later.
 *
 * | layout 1                       | layout 2                         |
 * |--------------------------------|----------------------------------|
 * | `ns:<ns>:<rest>`               | `ns:{<ns>}:<rest>`               |
 * | `log:ns:<ns>:<rest>` (events)  | `log:ns:{<ns>}:<rest>`           |
 * | `queue:ns:<ns>:<rest>`         | `queue:ns:{<ns>}:<rest>`         |
 * | `log:audit:<ns>`               | `log:ns:{<ns>}:audit`            |
 * | `log:fwlog:<ns>:<fw>`          | `log:ns:{<ns>}:fwlog:<fw>`       |
 *
 * On the fs backend a log is one key per entry (`<name>:<slot>`): the slot follows.
 * The keys of the event layout before per-namespace logs (legacy-events.ts: the global `events`
 * log, `wh-buffer:` queues, `ns:<ns>:wh-batch:` batches, the router cursor) keep their names:
 * the `events-once` step after this one converts them where older releases left them. Rate-limit windows, refusal tallies and leases expire on their
 * own and are left behind.
 */
export function hashTaggedName(key: string): string | null {
  const parts = key.split(':')
  const [head, kind, ns] = parts
  if (head === 'ns' && parts.length >= 3 && !kind.startsWith('{')) {
    if (parts[2] === 'wh-batch') return null
    return ['ns', `{${kind}}`, ...parts.slice(2)].join(':')
  }
  if (head === 'queue' && kind === 'ns' && parts.length >= 4 && !ns.startsWith('{'))
    return ['queue', 'ns', `{${ns}}`, ...parts.slice(3)].join(':')
  if (head !== 'log' || parts.length < 3) return null
  if (kind === 'ns' && parts.length >= 4 && !ns.startsWith('{'))
    return ['log', 'ns', `{${ns}}`, ...parts.slice(3)].join(':')
  if (kind === 'audit') return ['log', 'ns', `{${ns}}`, 'audit', ...parts.slice(3)].join(':')
  if (kind === 'fwlog' && parts.length >= 4) return ['log', 'ns', `{${ns}}`, 'fwlog', ...parts.slice(3)].join(':')
  return null
}

/** Moves every layout-1 key to its layout-2 name; returns how many moved. Safe to run again. */
export async function moveToHashTags(backend: Backend): Promise<number> {
  let moved = 0
  for (const key of await backend.keyValue.keys('')) {
    const target = hashTaggedName(key)
    if (target && (await backend.keyValue.moveKey(key, target))) moved++
  }
  return moved
}
