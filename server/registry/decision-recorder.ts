import { observeProxyDecision } from '../observability/metrics'
import type { RegistryPorts } from './ports'
import type { Principal, RequestMeta } from '../auth/principal'
import { actorOf } from '../auth/principal'
import { newId } from '../common/ids'
import { compact, makeEvent } from '../events/factory'
import type { FirewallDecisionData, NamespaceEvent } from '../events/schemas'
import type { DecisionLogEntry } from '../firewall/log-query'
import { decisionEventType, type Decision } from '../firewall/rules/evaluate'
import type { PackageVersionFacts } from '../firewall/rules/types'
import type { Firewall } from '../firewall/schema'

/** Everything one download or upload decision is recorded with. */
export interface DecisionRecord {
  ns: string
  firewall: Firewall
  phase: 'download' | 'upload'
  decision: Decision
  facts: PackageVersionFacts
  /** Upstream that served, or would have served, the package. */
  upstream: string
  principal: Principal
  meta: RequestMeta
}

/** The `firewall.*` data of a decision (docs/webhooks.md); "when set" fields are omitted when empty. */
function decisionData(record: DecisionRecord): FirewallDecisionData {
  const { decision, facts, principal, meta } = record
  const rule = decision.rule
  const exception = decision.exception
  return compact({
    firewall: decision.firewall,
    firewallVersion: decision.firewallVersion,
    executionPhase: record.phase,
    blocked: decision.outcome === 'blocked',
    ecosystem: facts.ecosystem,
    packageName: facts.packageName,
    version: facts.version,
    upstream: record.upstream,
    rule: rule?.id ?? '',
    user: principal.id,
    request: meta.requestId,
    message: decision.message,
    source: rule?.source,
    sourceFirewall: rule?.sourceFirewall,
    sourceFirewallVersion: rule?.sourceFirewallVersion,
    exception: exception?.id,
    exceptionSourceFirewall: exception?.exceptionSourceFirewall,
    exceptionSourceFirewallVersion: exception?.exceptionSourceFirewallVersion,
    published: facts.published,
    output: decision.output,
    interaction: principal.interaction,
    userAgent: meta.userAgent,
    remoteAddress: meta.remoteAddress,
  })
}

/** The writes of one decision: its firewall log entry and, when the decision emits one, its event. */
function decisionWrites(
  services: Pick<RegistryPorts, 'clock' | 'events'>,
  record: DecisionRecord,
): { entry: DecisionLogEntry; events: NamespaceEvent[] } {
  const data = decisionData(record)
  observeProxyDecision(data.executionPhase, record.decision.outcome)
  const now = services.clock.now()
  const entry: DecisionLogEntry = {
    id: newId('log', now),
    time: new Date(now).toISOString(),
    outcome: record.decision.outcome,
    ...data,
  }
  const type = decisionEventType(record.decision)
  return { entry, events: type ? [makeEvent(services.clock, record.ns, type, data)] : [] }
}

/**
 * Writes the decision's log entry and event atomically (one transaction), so the log and the
 * webhook outbox never disagree. Also takes extra events of the same request (a publish's
 * `package.published`).
 */
export async function recordDecision(
  services: Pick<RegistryPorts, 'clock' | 'events' | 'inventory'>,
  record: DecisionRecord,
  extraEvents: NamespaceEvent[] = [],
): Promise<DecisionLogEntry> {
  const { entry, events } = decisionWrites(services, record)
  await services.events.appendDecision(record.ns, record.firewall.id, entry, [...events, ...extraEvents])
  // A served version (allowed, by an exception or under a log-only rule) enters the inventory:
  // noted in memory, written in batches (server/inventory/recorder.ts).
  if (record.phase === 'download' && record.decision.outcome !== 'blocked')
    services.inventory.served({
      ns: record.ns,
      firewall: record.firewall.id,
      ecosystem: record.facts.ecosystem,
      packageName: record.facts.packageName,
      version: record.facts.version,
      principal: record.principal.id,
      at: services.clock.now(),
    })
  return entry
}

/** The `package.published` event for a version forwarded to the publish target. */
export function publishedEvent(
  services: Pick<RegistryPorts, 'clock' | 'events'>,
  record: Pick<DecisionRecord, 'ns' | 'firewall' | 'facts' | 'principal' | 'meta'>,
  upstream: string,
): NamespaceEvent {
  return makeEvent(services.clock, record.ns, 'package.published', {
    firewall: record.firewall.id,
    ecosystem: record.facts.ecosystem,
    packageName: record.facts.packageName,
    version: record.facts.version,
    actor: actorOf(record.principal, record.meta),
    upstream,
  })
}
