import type { ExceptionRequestCall } from './ports'
import { firewallPermissions, requireFirewallPermission } from '../auth/permissions'
import type { FirewallLogEntry } from '../firewall/log-query'
import { firewallLogPage } from '../firewall/log-page'
import type { Exception } from '../firewall/schema'
import { visibleFirewall } from './access'

/**
 * A blocked request, as the developer who hit it quotes it: what the "request an exception"
 * form is pre-filled from. Reading it needs `fw:access` (the permission that creates a
 * request); without `fw:read` a caller sees only blocks of their own requests, so a request id
 * cannot be used to read someone else's log.
 */
export interface BlockedRequest {
  requestId: string
  packageName: string
  version: string
  rule: string
  message: string
  executionPhase: string
  time: string
}

/**
 * The block the firewall log holds for `requestId`, or null when there is none the caller may
 * see (unknown id, not a block, another user's request without `fw:read`).
 * @example const block = await blockedRequest(ctx, 'web', 'req-0mwtu...')
 */
export async function blockedRequest(
  ctx: ExceptionRequestCall,
  firewallId: string,
  requestId: string,
): Promise<BlockedRequest | null> {
  const firewall = await visibleFirewall(ctx, firewallId)
  requireFirewallPermission(ctx.principal, firewall, 'fw:access')
  const { entries } = await firewallLogPage(
    ctx.services.firewallLog,
    ctx.ns,
    firewall.id,
    { requestId, blocked: true },
    1,
  )
  const entry: FirewallLogEntry | undefined = entries[0]
  if (!entry || entry.outcome === 'upstream_error' || !entry.rule) return null
  if (!firewallPermissions(ctx.principal, firewall).has('fw:read') && entry.user !== ctx.principal.id) return null
  return {
    requestId,
    packageName: entry.packageName,
    version: entry.version,
    rule: entry.rule,
    message: entry.message,
    executionPhase: entry.executionPhase,
    time: entry.time,
  }
}

/**
 * An exception id a reviewer can read (`ex-left-pad-1.3.0`), within the id pattern; scoped
 * names lose their `@` and `/`.
 * @example suggestedExceptionId('@acme/tool', '2.0.0') // 'ex-acme-tool-2.0.0'
 */
export function suggestedExceptionId(packageName: string, version: string | undefined): string {
  const slug = [packageName, version]
    .filter(Boolean)
    .join('-')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
  return `ex-${slug || 'package'}`.slice(0, 128)
}

/** The proposal a block suggests: this package at this version, for the rule that blocked it. */
export function proposalFor(
  block: Pick<BlockedRequest, 'packageName' | 'version' | 'rule'>,
): Pick<Exception, 'id' | 'rule' | 'selector'> {
  return {
    id: suggestedExceptionId(block.packageName, block.version),
    rule: block.rule,
    selector: { packageName: block.packageName, version: block.version },
  }
}
