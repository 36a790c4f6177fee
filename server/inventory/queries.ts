import type { InventoryRef } from '../../storage/repositories/inventory'
import { canOnFirewall, requireFirewallPermission } from '../auth/permissions'
import { firewallNotFound, invalid } from '../common/errors'
import { normalizePackageName } from '../firewall/rules/names'
import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { entriesOf, type InventoryEntry, type InventoryFilter } from './entries'
import type { InventoryCall } from './ports'
import { buildSbom } from './sbom'
import { sortCooperatively } from '../common/cooperative-sort'

/** What the inventory lists take (`?packageName=&version=&since=&until=&limit=&cursor=`). */
export interface InventoryQuery {
  packageName?: string
  version?: string
  since?: string
  until?: string
  /** Namespace list only: one firewall. */
  firewall?: string
  limit: number
  cursor?: string
}

export interface InventoryPage {
  entries: InventoryEntry[]
  nextCursor: string | null
}

/** Package documents read per storage round trip. */
const BATCH = 100

const isEcosystem = (value: string): value is Ecosystem => (ECOSYSTEMS as readonly string[]).includes(value)

const encodeCursor = (key: string) => Buffer.from(key).toString('base64url')
function decodeCursor(cursor: string | undefined): string | null {
  if (!cursor) return null
  const key = Buffer.from(cursor, 'base64url').toString()
  if (key.split('\u0000').length !== 4) throw invalid('invalid_cursor', 'cursor is not one this list gave')
  return key
}

const refKey = (ref: InventoryRef) => `${ref.ecosystem}\u0000${ref.nameKey}`

function filterOf(query: InventoryQuery, firewalls: Set<string>): InventoryFilter {
  const { packageName } = query
  return {
    nameKey: packageName
      ? (ecosystem) => (isEcosystem(ecosystem) ? normalizePackageName(ecosystem, packageName) : packageName)
      : undefined,
    version: query.version,
    since: query.since ? Date.parse(query.since) : undefined,
    until: query.until ? Date.parse(query.until) : undefined,
    firewalls,
  }
}

/**
 * One page of the entries of `refs` a filter keeps, in (package, firewall, version) order, after
 * `cursor`. Reads only the package documents it pages through (and all of them when a filter
 * keeps few: a time filter reads the package documents to judge them).
 */
async function page(
  ctx: InventoryCall,
  refs: InventoryRef[],
  filter: InventoryFilter,
  limit: number,
  cursor: string | undefined,
): Promise<InventoryPage> {
  const after = decodeCursor(cursor)
  const afterRef = after ? after.split('\u0000').slice(0, 2).join('\u0000') : null
  // As many refs as packages served (tens of thousands on a busy firewall): sorted in turns.
  const keyed = refs
    .filter((ref) => !filter.nameKey || filter.nameKey(ref.ecosystem) === ref.nameKey)
    .map((ref) => ({ ref, key: refKey(ref) }))
    .filter(({ key }) => afterRef === null || key >= afterRef)
  const sorted = (await sortCooperatively(keyed, (a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))).map(
    ({ ref }) => ref,
  )
  const entries: InventoryEntry[] = []
  let last: string | null = null
  for (let start = 0; start < sorted.length; start += BATCH) {
    const chunk = sorted.slice(start, start + BATCH)
    const docs = await ctx.services.inventoryStore.packages(ctx.ns, chunk)
    for (let i = 0; i < chunk.length; i++) {
      const doc = docs[i]
      if (!doc) continue
      for (const { key, entry } of entriesOf(chunk[i], doc, filter)) {
        if (after !== null && key <= after) continue
        if (entries.length === limit) return { entries, nextCursor: encodeCursor(last!) }
        entries.push(entry)
        last = key
      }
    }
  }
  return { entries, nextCursor: null }
}

/**
 * `GET /v1/{ns}/config/{fw}/inventory` (needs `fw:read`): the versions the firewall served, by
 * package then version, filtered by package name (as the registry compares names), version and
 * time (served at some time within `since`..`until`).
 */
export async function firewallInventory(ctx: InventoryCall, fw: string, query: InventoryQuery): Promise<InventoryPage> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, fw)
  if (!firewall) throw firewallNotFound(fw)
  requireFirewallPermission(ctx.principal, firewall, 'fw:read')
  const refs = await ctx.services.inventoryStore.firewallPackages(ctx.ns, fw)
  const result = await page(ctx, refs, filterOf(query, new Set([fw])), query.limit, query.cursor)
  return { ...result, entries: result.entries.map(({ firewall: _firewall, ...entry }) => entry as InventoryEntry) }
}

/**
 * `GET /v1/{ns}/inventory`: the same across every firewall the caller may read (`fw:read`), each
 * entry with its `firewall`; `?firewall=` narrows it to one.
 */
export async function namespaceInventory(ctx: InventoryCall, query: InventoryQuery): Promise<InventoryPage> {
  const readable = (await ctx.services.firewalls.list(ctx.ns))
    .filter((firewall) => canOnFirewall(ctx.principal, firewall, 'fw:read'))
    .map((firewall) => firewall.id)
    .filter((id) => !query.firewall || id === query.firewall)
  const seen = new Map<string, InventoryRef>()
  for (const fw of readable)
    for (const ref of await ctx.services.inventoryStore.firewallPackages(ctx.ns, fw)) seen.set(refKey(ref), ref)
  return page(ctx, [...seen.values()], filterOf(query, new Set(readable)), query.limit, query.cursor)
}

/** Every entry of a firewall served within [since, until] (the SBOM): one pass, unpaged. */
export async function firewallInventoryAll(
  ctx: InventoryCall,
  fw: string,
  window: Pick<InventoryQuery, 'since' | 'until'>,
): Promise<InventoryEntry[]> {
  const firewall = await ctx.services.firewalls.get(ctx.ns, fw)
  if (!firewall) throw firewallNotFound(fw)
  requireFirewallPermission(ctx.principal, firewall, 'fw:read')
  const refs = await ctx.services.inventoryStore.firewallPackages(ctx.ns, fw)
  const filter = filterOf({ ...window, limit: 0 }, new Set([fw]))
  return (await page(ctx, refs, filter, Number.MAX_SAFE_INTEGER, undefined)).entries
}

/**
 * `GET /v1/{ns}/config/{fw}/inventory/sbom` (needs `fw:read`): a CycloneDX 1.5 JSON document of
 * the versions the firewall served within [since, until], one component per version with its purl.
 */
export async function firewallSbom(
  ctx: InventoryCall,
  fw: string,
  window: Pick<InventoryQuery, 'since' | 'until'>,
): Promise<string> {
  const entries = await firewallInventoryAll(ctx, fw, window)
  const firewall = await ctx.services.firewalls.get(ctx.ns, fw)
  return buildSbom(
    {
      namespace: ctx.ns,
      firewall: fw,
      ecosystem: firewall?.ecosystem ?? 'npm',
      since: window.since,
      until: window.until,
      now: ctx.services.clock.now(),
    },
    entries,
  )
}
