import type { ExceptionRequestCall } from './ports'
import { requireFirewallPermission } from '../auth/permissions'
import { conflict, invalid } from '../common/errors'
import { newId } from '../common/ids'
import { nowIso } from '../auth/call-context'
import { chainOf } from '../firewall/extends-chain'
import { Exception, type Firewall } from '../firewall/schema'
import type { StoredExceptionRequest } from '../../storage/repositories/exception-requests'
import { callerFacts, requestsOf, visibleFirewall } from './access'
import { initialSnapshot, present, requestData } from './actor'
import { requestEvent } from './events'
import { duplicateRequest, pendingDuplicate } from './duplicate'
import type { CreateExceptionRequestBody, ExceptionRequestView } from './model'

/** An exception may only name a rule the firewall has, itself or through its bases (400 at `path`). */
export async function requireKnownRule(
  ctx: ExceptionRequestCall,
  firewall: Firewall,
  ruleId: string,
  path: string,
): Promise<void> {
  const all = new Map((await ctx.services.firewalls.list(ctx.ns)).map((fw) => [fw.id, fw]))
  all.set(firewall.id, firewall)
  const known = chainOf(all, firewall.id).some(
    (fw) => fw.ecosystem === firewall.ecosystem && fw.rules.some((rule) => rule.id === ruleId),
  )
  if (!known) {
    throw invalid('invalid_reference', `${path}: unknown rule "${ruleId}"`, [
      { path, message: `unknown rule "${ruleId}"` },
    ])
  }
}

/**
 * `POST .../exception-requests` (needs `fw:access`): a new pending request whose requester is
 * the caller, never anything the body says; emits `exception-request.created`. A second pending
 * request of the same requester for the same proposal is 409 `duplicate_exception_request`.
 */
export async function createExceptionRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  body: CreateExceptionRequestBody,
): Promise<ExceptionRequestView> {
  const firewall = await visibleFirewall(ctx, firewallId)
  requireFirewallPermission(ctx.principal, firewall, 'fw:access')
  const proposedException = Exception.parse(body.proposedException)
  await requireKnownRule(ctx, firewall, proposedException.rule, 'proposedException.rule')
  const now = nowIso(ctx)
  const requestedBy = ctx.principal.id
  const stored: StoredExceptionRequest<Exception> = {
    record: {
      id: newId('exr', ctx.services.clock.now()),
      firewallId,
      proposedException,
      justification: body.justification,
      requestedBy,
      requestedAt: now,
    },
    snapshot: initialSnapshot(requestedBy, now),
  }
  const { id } = stored.record
  // Checked inside the transaction, on the index it watches: of two identical submissions racing
  // (any processes sharing the storage), the second re-runs on the first's index and is refused.
  await requestsOf(ctx).change(ctx.ns, firewallId, [id], ({ index, requests }) => {
    if (requests.get(id)) throw conflict('exception_request_exists', `exception request "${id}" already exists`)
    const pending = pendingDuplicate(index, requestedBy, proposedException)
    if (pending !== undefined) throw duplicateRequest(ctx.ns, firewallId, pending)
    return {
      changed: [{ stored, status: 'pending' }],
      events: [requestEvent(ctx, 'exception-request.created', firewall, requestData(stored))],
      result: undefined,
    }
  })
  return present(stored, callerFacts(ctx, firewall, now))
}
