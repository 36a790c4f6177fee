import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { exposureFirewall, member } from '../http/access'
import { ClientId } from '../common/ids'
import { ExposureData } from '../events/schemas'
import { acknowledgeExposure, listExposures } from '../exposures/queries'
import { NsParams, PageQuery, nextLink } from './common'

const Exposure = ExposureData.meta({
  id: 'Exposure',
  description: 'a package version a firewall served that advisory data named after it was served',
})

const AcknowledgeBody = z
  .object({ comment: z.string().max(2000).optional() })
  .strict()
  .meta({ id: 'AcknowledgeExposure' })

export const exposureOperations = [
  defineOperation({
    id: 'listExposures',
    method: 'GET',
    path: '/v1/{ns}/exposures',
    summary: 'Served versions that advisory data named later, newest detection first',
    tag: 'Inventory',
    params: NsParams,
    access: member,
    query: PageQuery.extend({
      firewall: ClientId.optional(),
      status: z.enum(['open', 'acknowledged']).optional(),
    }),
    response: z.array(Exposure),
    audit: { action: 'exposures.read', resourceType: 'exposure' },
    handler: async ({ ctx, query, url }) => {
      const { exposures, nextCursor } = await listExposures(ctx, query)
      return { body: exposures, headers: nextLink(url, nextCursor) }
    },
  }),
  defineOperation({
    id: 'acknowledgeExposure',
    method: 'POST',
    path: '/v1/{ns}/exposures/{id}/acknowledge',
    summary: 'Acknowledge an exposure (needs fw:update:exception on its firewall)',
    tag: 'Inventory',
    params: NsParams.extend({ id: ClientId }),
    access: exposureFirewall('fw:update:exception'),
    body: AcknowledgeBody,
    bodyOptional: true,
    response: Exposure,
    audit: { action: 'exposure.acknowledge', resourceType: 'exposure', resourceId: (p) => p.id },
    handler: async ({ ctx, params, body }) => ({ body: await acknowledgeExposure(ctx, params.id, body.comment) }),
  }),
]
