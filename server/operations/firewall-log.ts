import { z } from 'zod'
import { defineOperation } from '../http/operation'
import { firewall } from '../http/access'
import { queryFirewallLog } from '../firewall/log'
import { FwParams, PageQuery, nextLink } from './common'

const DecisionEntry = z
  .object({
    id: z.string(),
    time: z.string(),
    outcome: z.enum(['allowed', 'blocked', 'exception-allowed', 'logged']),
    blocked: z.boolean(),
    packageName: z.string(),
    version: z.string(),
    request: z.string(),
  })
  .passthrough()
  .meta({ id: 'FirewallDecisionLogEntry', description: 'a download or upload decision' })
const UpstreamErrorEntry = z
  .object({
    id: z.string(),
    time: z.string(),
    outcome: z.literal('upstream_error'),
    blocked: z.literal(false),
    upstream: z.string(),
    reason: z.string(),
    message: z.string(),
    request: z.string(),
  })
  .passthrough()
  .meta({
    id: 'UpstreamErrorLogEntry',
    description: 'a failed call to an upstream (never an event); no package is named',
  })
const LogEntry = z.union([DecisionEntry, UpstreamErrorEntry])

export const firewallLogOperations = [
  defineOperation({
    id: 'getFirewallLog',
    method: 'GET',
    path: '/v1/{ns}/config/{fw}/log',
    summary: "A firewall's decision log, newest first",
    tag: 'Firewalls',
    params: FwParams,
    access: firewall('fw:read'),
    query: PageQuery.extend({
      since: z.iso.datetime({ offset: true }).optional(),
      until: z.iso.datetime({ offset: true }).optional(),
      packageName: z.string().max(214).optional(),
      blocked: z
        .enum(['true', 'false'])
        .transform((value) => value === 'true')
        .optional(),
      requestId: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe('exact request id (`req-...`), as a block message shows it'),
    }),
    response: z.array(LogEntry),
    audit: { action: 'firewall.log.read', resourceType: 'firewall', resourceId: (p) => p.fw },
    handler: async ({ ctx, params, query, url }) => {
      const { entries, nextCursor } = await queryFirewallLog(ctx, params.fw, query)
      return { body: entries, headers: nextLink(url, nextCursor) }
    },
  }),
]
