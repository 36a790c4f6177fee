import type { ExceptionRequestCall } from './ports'
import { DECIDE_PERMISSION } from '../../machines/exception-request.machine'
import {
  exceptionRequestKeys,
  type ChangedRequest,
  type RequestIndex,
} from '../../storage/repositories/exception-requests'
import { requireFirewallPermission } from '../auth/permissions'
import { DomainError, notFound } from '../common/errors'
import { nowIso } from '../auth/call-context'
import { editFirewall } from '../firewall/commands'
import { Exception } from '../firewall/schema'
import { callerFacts, requestsOf, visibleFirewall, visibleRequest } from './access'
import { present, requestData, transition } from './actor'
import { requestEvent } from './events'
import { requireKnownRule } from './create'
import type { ApproveBody, ApproveResult } from './model'

/** The set of identical pending requests changed between planning and the transaction. */
class SiblingsChanged extends Error {}

const MAX_PLANS = 20

/**
 * Other pending requests whose proposal names the same rule and selector (packageName,
 * version) as the proposal of the request being approved.
 */
function identicalPending(index: RequestIndex, id: string): string[] {
  const target = index[id]
  if (!target) return []
  return Object.entries(index)
    .filter(
      ([other, entry]) =>
        other !== id &&
        entry.status === 'pending' &&
        entry.rule === target.rule &&
        entry.packageName === target.packageName &&
        entry.version === target.version,
    )
    .map(([other]) => other)
    .sort()
}

/**
 * `POST .../approve` (needs `fw:update:exception`). In ONE transaction: the exception
 * is added to the firewall as one new version (one `config.firewall.updated`), the request and
 * every identical pending request move to `approved` (one `exception-request.approved` each).
 * A used exception id or a request no longer pending/denied refuses with 409 and writes nothing;
 * of two concurrent approvals (any processes sharing the storage) exactly one commits.
 */
export async function approveExceptionRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
  body: ApproveBody,
): Promise<ApproveResult> {
  const firewall = await visibleFirewall(ctx, firewallId)
  const stored = await visibleRequest(ctx, firewall, id)
  requireFirewallPermission(ctx.principal, firewall, DECIDE_PERMISSION)
  // Without an `exception` the reviewer approves the proposal as it stands.
  const exception = Exception.parse(body.exception ?? stored.record.proposedException)
  await requireKnownRule(ctx, firewall, exception.rule, 'exception.rule')
  for (let plan = 0; plan < MAX_PLANS; plan++) {
    // The watched keys are fixed per transaction, so the siblings are planned from a read of the
    // index and re-checked inside; a change in between (a new identical request) re-plans.
    const siblings = identicalPending(await requestsOf(ctx).index(ctx.ns, firewallId), id)
    try {
      return await approveWith(ctx, firewallId, id, exception, body.comment, siblings)
    } catch (error) {
      if (!(error instanceof SiblingsChanged)) throw error
    }
  }
  throw new DomainError('conflict', 'busy', `exception request "${id}" kept changing; try again`)
}

async function approveWith(
  ctx: ExceptionRequestCall,
  firewallId: string,
  id: string,
  exception: Exception,
  comment: string | undefined,
  siblings: string[],
): Promise<ApproveResult> {
  const repo = requestsOf(ctx)
  const ids = [id, ...siblings]
  const at = nowIso(ctx)
  // Filled by `apply` of the attempt that commits; `also` and the answer use the same plan.
  let plan: { index: RequestIndex; changed: ChangedRequest<Exception>[] } | null = null
  const stored = await editFirewall(ctx, firewallId, {
    permission: DECIDE_PERMISSION,
    watch: [
      exceptionRequestKeys.index(ctx.ns, firewallId),
      ...ids.map((one) => exceptionRequestKeys.request(ctx.ns, firewallId, one)),
    ],
    apply: (current, watched) => {
      const { index, requests } = repo.read(watched, ctx.ns, firewallId, ids)
      if (identicalPending(index, id).join() !== siblings.join()) throw new SiblingsChanged()
      const event = {
        type: 'APPROVE' as const,
        ...callerFacts(ctx, current, at),
        exceptionId: exception.id,
        exceptionIdFree: !current.exceptions.some((existing) => existing.id === exception.id),
        ...(comment !== undefined ? { comment } : {}),
      }
      plan = {
        index,
        changed: ids.map((one) => {
          const request = requests.get(one)
          if (!request) throw notFound('exception request', one)
          return transition(request, event)
        }),
      }
      return { ...current, exceptions: [...current.exceptions, exception] }
    },
    summary: () =>
      `exception "${exception.id}" added: exception request ${id} approved` +
      (siblings.length ? ` with ${siblings.join(', ')}` : ''),
    also: (next) => ({
      ...repo.writesFor(ctx.ns, firewallId, plan!.index, plan!.changed),
      events: plan!.changed.map(({ stored: request }) =>
        requestEvent(ctx, 'exception-request.approved', next, requestData(request)),
      ),
    }),
  })
  const committed: { changed: ChangedRequest<Exception>[] } = plan!
  return {
    request: present(committed.changed[0].stored, callerFacts(ctx, stored, at)),
    exception: stored.exceptions.find((existing) => existing.id === exception.id)!,
    alsoApproved: siblings,
  }
}
