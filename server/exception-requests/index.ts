import type { ExceptionRequestCall } from './ports'
import { liveId } from '../observability/live-registry'
import { createExceptionRequest as create } from './create'
import { approveExceptionRequest as approve } from './approve'
import { denyExceptionRequest as deny, withdrawExceptionRequest as withdraw } from './decide'

export { getExceptionRequest, listExceptionRequests, listOwnExceptionRequests, otherPendingRequests } from './queries'
export * from './model'

/** Tells the live diagrams (dashboard) the request's state after a committed change. */
function published<T extends { id: string; status: string }>(
  ctx: ExceptionRequestCall,
  firewallId: string,
  request: T,
): T {
  ctx.services.live.publish('exception-request', liveId.exceptionRequest(ctx.ns, firewallId, request.id), {
    value: request.status,
  })
  return request
}

export const createExceptionRequest: typeof create = async (ctx, firewallId, body) =>
  published(ctx, firewallId, await create(ctx, firewallId, body))

export const approveExceptionRequest: typeof approve = async (ctx, firewallId, id, body) => {
  const result = await approve(ctx, firewallId, id, body)
  published(ctx, firewallId, result.request)
  for (const other of result.alsoApproved)
    ctx.services.live.publish('exception-request', liveId.exceptionRequest(ctx.ns, firewallId, other), {
      value: 'approved',
    })
  return result
}

export const denyExceptionRequest: typeof deny = async (ctx, firewallId, id, body) =>
  published(ctx, firewallId, await deny(ctx, firewallId, id, body))
export const withdrawExceptionRequest: typeof withdraw = async (ctx, firewallId, id) =>
  published(ctx, firewallId, await withdraw(ctx, firewallId, id))
