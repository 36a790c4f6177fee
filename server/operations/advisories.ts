import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { member } from '../http/access'
import { ECOSYSTEMS } from '../firewall/schema'
import { NsParams } from './common'

const EcosystemStatus = z
  .object({
    ecosystem: z.enum(ECOSYSTEMS),
    source: z.enum(['feed', 'file', 'directory', 'feed+directory', 'file+directory', 'none']),
    loaded: z
      .boolean()
      .describe('false: vulnerability and malware rules of this ecosystem answer 503 until data loads'),
    records: z.number().int(),
    invalid: z.number().int(),
    withdrawn: z.number().int(),
    lastRefresh: z.string().nullable().describe('last time the feed data was confirmed current (new archive or 304)'),
    lastChange: z.string().nullable(),
    lastError: z.object({ at: z.string().optional(), message: z.string() }).nullable(),
    stale: z.boolean().describe('feed data missing or older than 3 x ADVISORY_REFRESH, or no data configured'),
  })
  .meta({ id: 'AdvisoryEcosystemStatus' })

const AdvisoryStatusView = z
  .object({
    feed: z.object({ enabled: z.boolean(), refresh: z.string() }),
    directory: z.object({ configured: z.boolean(), loaded: z.boolean() }),
    ecosystems: z.array(EcosystemStatus),
  })
  .meta({ id: 'AdvisoryStatus' })

export const advisoryOperations = [
  defineOperation({
    id: 'getAdvisoryStatus',
    method: 'GET',
    path: '/v1/{ns}/advisories/status',
    summary: 'Advisory data per ecosystem: source, records, last refresh, last error',
    tag: 'Advisories',
    params: NsParams,
    access: member,
    response: AdvisoryStatusView,
    audit: { action: 'advisories.status.read', resourceType: 'advisories' },
    // Process-wide data, the same for every namespace: any member may see how fresh it is.
    handler: async ({ ctx }) => ({ body: ctx.services.advisories.status() }),
  }),
]
