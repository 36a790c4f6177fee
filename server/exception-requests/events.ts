import type { ExceptionRequestCall } from './ports'
import { actorOfCall } from '../auth/call-context'
import { eventLinkOrigin } from '../app/config'
import { makeEvent } from '../events/factory'
import type { NamespaceEvent } from '../events/schemas'
import type { Firewall } from '../firewall/schema'
import type { ExceptionRequest } from './model'

type ExceptionRequestEventType =
  | 'exception-request.created'
  | 'exception-request.approved'
  | 'exception-request.denied'
  | 'exception-request.withdrawn'

/**
 * The dashboard page of a request.
 * @example requestLink(config, 'default', 'npm-main', 'exr-...') // 'http://localhost:3000/namespaces/default/firewalls/npm-main/exception-requests/exr-...'
 */
function requestLink(config: Parameters<typeof eventLinkOrigin>[0], ns: string, fw: string, id: string): string {
  const path = ['namespaces', ns, 'firewalls', fw, 'exception-requests', id].map(encodeURIComponent).join('/')
  return `${eventLinkOrigin(config)}/${path}`
}

/** One `exception-request.*` event: the complete request after the change, no caller flags. */
export function requestEvent(
  ctx: ExceptionRequestCall,
  type: ExceptionRequestEventType,
  firewall: Pick<Firewall, 'id' | 'ecosystem'>,
  request: ExceptionRequest,
): NamespaceEvent {
  return makeEvent(ctx.services.clock, ctx.ns, type, {
    firewall: firewall.id,
    ecosystem: firewall.ecosystem,
    actor: actorOfCall(ctx),
    request,
    dashboardUrl: requestLink(ctx.services.config, ctx.ns, firewall.id, request.id),
  })
}
