import type { ExceptionRequestCall } from './ports'
import { DECIDE_PERMISSION } from '../../machines/exception-request.machine'
import { canOnFirewall, requireFirewallPermission } from '../auth/permissions'
import { forbidden, notFound, firewallNotFound } from '../common/errors'
import { nowIso } from '../auth/call-context'
import type { Firewall } from '../firewall/schema'
import { keys } from '../../storage/repositories/keys'
import { callerFacts, requestsOf, visibleFirewall, visibleRequest } from './access'
import { present, requestData, transition } from './actor'
import { requestEvent } from './events'
import type { ExceptionRequestView } from './model'

type Decision = { type: 'DENY'; comment?: string } | { type: 'WITHDRAW' }

const EVENT_TYPES = { DENY: 'exception-request.denied', WITHDRAW: 'exception-request.withdrawn' } as const

/**
 * Deny or withdraw: the permission is checked first (403 names it), then the actor, restored
 * from storage inside the transaction, decides whether its state allows the move (409).
 */
async function decide(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
  decision: Decision,
): Promise<ExceptionRequestView> {
  const firewall = await visibleFirewall(ctx, firewallId)
  const stored = await visibleRequest(ctx, firewall, id)
  if (decision.type === 'DENY') requireFirewallPermission(ctx.principal, firewall, DECIDE_PERMISSION)
  else if (
    stored.record.requestedBy !== ctx.principal.id &&
    !canOnFirewall(ctx.principal, firewall, DECIDE_PERMISSION)
  ) {
    throw forbidden(DECIDE_PERMISSION, `only the requester or a holder of ${DECIDE_PERMISSION} may withdraw a request`)
  }
  const at = nowIso(ctx)
  const firewallKey = keys.firewall(ctx.ns, firewallId)
  // The firewall document is read in the same transaction so the guards see its current permissions.
  return requestsOf(ctx).change(
    ctx.ns,
    firewallId,
    [id],
    ({ requests, values }) => {
      const current = values.get(firewallKey) as Firewall | null
      const request = requests.get(id)
      if (!current) throw firewallNotFound(firewallId)
      if (!request) throw notFound('exception request', id)
      const facts = callerFacts(ctx, current, at)
      const next = transition(request, { ...decision, ...facts })
      return {
        changed: [next],
        events: [requestEvent(ctx, EVENT_TYPES[decision.type], current, requestData(next.stored))],
        result: present(next.stored, facts),
      }
    },
    [firewallKey],
  )
}

/** `POST .../deny` (needs `fw:update:exception`): pending -> denied, with the reviewer's comment. */
export function denyExceptionRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
  comment?: string,
): Promise<ExceptionRequestView> {
  return decide(ctx, firewallId, id, { type: 'DENY', ...(comment !== undefined ? { comment } : {}) })
}

/** `POST .../withdraw` (the requester, or a reviewer): pending -> withdrawn. */
export function withdrawExceptionRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
): Promise<ExceptionRequestView> {
  return decide(ctx, firewallId, id, { type: 'WITHDRAW' })
}
