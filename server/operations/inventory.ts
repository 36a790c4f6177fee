import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { firewall, member } from '../http/access'
import { ClientId } from '../common/ids'
import { ECOSYSTEMS } from '../firewall/schema'
import { firewallInventory, firewallSbom, namespaceInventory } from '../inventory/queries'
import { CYCLONEDX_JSON } from '../inventory/sbom'
import { FwParams, NsParams, PageQuery, nextLink } from './common'

const InventoryEntry = z
  .object({
    packageName: z.string(),
    version: z.string(),
    ecosystem: z.enum(ECOSYSTEMS),
    firstServedAt: z.string(),
    lastServedAt: z.string(),
    count: z.number().int(),
    servedTo: z.array(z.string()).describe('principal ids that pulled it, newest first (at most 100)'),
  })
  .meta({ id: 'InventoryEntry', description: 'a package version the firewall served' })

const NamespaceInventoryEntry = InventoryEntry.extend({ firewall: z.string() }).meta({
  id: 'NamespaceInventoryEntry',
  description: 'a package version one of the namespace’s firewalls served',
})

/** `?packageName=&version=&since=&until=&limit=&cursor=` of the inventory lists. */
export const InventoryQuery = PageQuery.extend({
  // The cursor encodes the last entry's ecosystem, name (214), firewall id (128) and version (256).
  cursor: z.string().min(1).max(1200).optional().describe('from the `next` link of the previous page'),
  packageName: z.string().min(1).max(214).optional().describe('compared as the ecosystem’s registry compares names'),
  version: z.string().min(1).max(256).optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('served at or after this time'),
  until: z.iso.datetime({ offset: true }).optional().describe('served at or before this time'),
})

const Sbom = z
  .object({
    bomFormat: z.literal('CycloneDX'),
    specVersion: z.literal('1.5'),
    metadata: z.object({}).passthrough(),
    components: z
      .array(
        z.object({ type: z.literal('library'), name: z.string(), version: z.string(), purl: z.string() }).passthrough(),
      )
      .optional(),
  })
  .passthrough()
  .meta({ id: 'CycloneDxBom', description: 'CycloneDX 1.5 JSON (https://cyclonedx.org/docs/1.5/json/)' })

export const inventoryOperations = [
  defineOperation({
    id: 'getFirewallInventory',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}/inventory',
    summary: 'The package versions a firewall served: when first and last, how often, to whom',
    tag: 'Inventory',
    params: FwParams,
    access: firewall('fw:read'),
    query: InventoryQuery,
    response: z.array(InventoryEntry),
    audit: { action: 'firewall.inventory.read', resourceType: 'firewall', resourceId: (p) => p.fw },
    handler: async ({ ctx, params, query, url }) => {
      const { entries, nextCursor } = await firewallInventory(ctx, params.fw, query)
      return { body: entries, headers: nextLink(url, nextCursor) }
    },
  }),
  defineOperation({
    id: 'getFirewallSbom',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}/inventory/sbom',
    summary: 'A CycloneDX 1.5 SBOM of what the firewall served in a period, one component (with purl) per version',
    tag: 'Inventory',
    params: FwParams,
    access: firewall('fw:read'),
    query: InventoryQuery.pick({ since: true, until: true }),
    response: Sbom,
    mediaType: CYCLONEDX_JSON,
    audit: { action: 'firewall.sbom.read', resourceType: 'firewall', resourceId: (p) => p.fw },
    handler: async ({ ctx, params, query }) => ({
      json: await firewallSbom(ctx, params.fw, query),
      headers: { 'content-disposition': `attachment; filename="${params.fw}-sbom.cdx.json"` },
    }),
  }),
  defineOperation({
    id: 'getNamespaceInventory',
    method: 'GET',
    path: '/v1/{ns}/inventory',
    summary: 'The package versions served by every firewall the caller can read',
    tag: 'Inventory',
    params: NsParams,
    access: member,
    query: InventoryQuery.extend({ firewall: ClientId.optional() }),
    response: z.array(NamespaceInventoryEntry),
    audit: { action: 'inventory.read', resourceType: 'inventory' },
    handler: async ({ ctx, query, url }) => {
      const { entries, nextCursor } = await namespaceInventory(ctx, query)
      return { body: entries, headers: nextLink(url, nextCursor) }
    },
  }),
]
