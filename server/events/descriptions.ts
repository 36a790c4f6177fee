import type { FixedEventType } from './schemas'

/**
 * What each event type means, published as the `description` of its entry in
 * `/schemas/webhook-events-v1.json` and listed by the dashboard's event catalog. A closed table:
 * a new event type does not build until it is described here.
 */
export const EVENT_TYPE_DESCRIPTIONS: Record<FixedEventType | 'audit.*', string> = {
  'firewall.blocked':
    'A rule blocked a download or a publish. The data names the package, version, rule and the request id the client was shown.',
  'firewall.exception-allowed':
    'A blocking rule matched, but an exception let the request through; `exception` names it.',
  'firewall.allowed': 'A log-only rule (block: false, log: true) matched a request that went through.',
  'firewall.exposure':
    'Advisory data (a feed refresh or an ADVISORY_DIR reload) named a package version the firewall had already served: a malicious-package report or a vulnerability. One event per firewall, version and advisory, ever; `servedTo` lists who pulled it.',
  'config.firewall.created':
    'A firewall was created (PUT of a new id, or a clone); `config` is the whole configuration, credentials redacted.',
  'config.firewall.updated':
    'A firewall changed: configuration, a rule, an exception, credentials, an approval or a rollback. One event per change, with the configuration after it.',
  'config.firewall.deleted': 'A firewall was deleted; `config` is its last configuration.',
  'config.webhook.created': 'A webhook was created; `config` holds its subscription, never a secret.',
  'config.webhook.updated': 'A webhook changed, including a secret rotation and a quarantine release.',
  'config.webhook.deleted': 'A webhook was deleted.',
  'package.published':
    'A package version passed the upload rules and was forwarded to the publish-target upstream. Maven and PyPI send one per uploaded file, `file` being the upload request path below the firewall prefix (Maven `{group/path}/{artifactId}/{version}/{file}`, PyPI `legacy/`).',
  'package.unlisted': 'A NuGet package version was unlisted on the publish-target upstream.',
  'exception-request.created':
    'A developer asked for an exception; `request` holds the proposal and the justification.',
  'exception-request.approved':
    'A reviewer approved a request (one event per request when identical pending ones are approved with it).',
  'exception-request.denied': 'A reviewer denied a request.',
  'exception-request.withdrawn': 'The requester (or a reviewer) withdrew a request.',
  'webhook.rate_limited':
    'System event, always delivered: events were dropped at the buffer cap (`buffer_overflow`) or deliveries are paced against a backlog (`rate_limited`).',
  'webhook.test': 'System event, always delivered: a test send from the API or the dashboard.',
  'audit.*':
    'One type per audit action (for example audit.firewall.rule.upsert): successes and failures of API and dashboard actions, with thin metadata.',
}
