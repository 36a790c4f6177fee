import { actorOf } from '../auth/principal'
import { makeEvent } from '../events/factory'
import type { NamespaceEvent } from '../events/schemas'
import { evaluate, type Decision, type FirewallLayer } from '../firewall/rules/evaluate'
import type { EvaluationContext, PackageVersionFacts } from '../firewall/rules/types'
import type { ExecutionPhase } from '../firewall/schema'
import { recordDecision, type DecisionRecord } from './decision-recorder'
import { chainAndContext } from './firewall-chain'
import type { ProxyRequest } from './proxy-request'
import { blockedMessage, RegistryError } from './responses'

/**
 * The firewall's rules as one request sees them: the chain and evaluation context loaded
 * once, then any number of decisions. Shared by the PyPI, Maven and NuGet protocol modules so
 * that they take exactly npm's decision path.
 */
export interface Policy {
  chain: FirewallLayer[]
  ctx: EvaluationContext
  /** Whether any layer has a `versions` rule (skip filtering work when none). */
  filtersVersions: boolean
  decide(phases: readonly ExecutionPhase[], facts: PackageVersionFacts): Decision
  /** Whether `versions` rules leave the version visible in an index (no log, no event). */
  visible(facts: PackageVersionFacts): boolean
}

/** Loads the chain and context of the request's firewall. */
export async function loadPolicy(request: ProxyRequest): Promise<Policy> {
  const [chain, ctx] = await chainAndContext(request)
  const filtersVersions = chain.some((layer) => layer.firewall.rules.some((rule) => rule.executionPhase === 'versions'))
  const decide = (phases: readonly ExecutionPhase[], facts: PackageVersionFacts) => evaluate(chain, phases, facts, ctx)
  return {
    chain,
    ctx,
    filtersVersions,
    decide,
    visible: (facts) => !filtersVersions || decide(['versions'], facts).outcome !== 'blocked',
  }
}

/** Phases a decision evaluates: a version hidden from an index is also refused as a file. */
const PHASES = { download: ['download', 'versions'], upload: ['upload'] } as const

/**
 * One download or upload decision. A block is written to the firewall log (and the event
 * log) before the 403 is thrown; an allowed decision is returned unrecorded so the caller can
 * record it together with what follows (the served file, or `package.published`).
 * @example const record = await decideArtifact(request, policy, 'download', facts, upstream.id)
 */
export async function decideArtifact(
  request: ProxyRequest,
  policy: Policy,
  phase: 'download' | 'upload',
  facts: PackageVersionFacts,
  upstream: string,
): Promise<DecisionRecord> {
  const decision = policy.decide(PHASES[phase], facts)
  const record: DecisionRecord = {
    ns: request.ns,
    firewall: request.firewall,
    phase,
    decision,
    facts,
    upstream,
    principal: request.principal,
    meta: request.meta,
  }
  if (decision.outcome === 'blocked') {
    await recordDecision(request.services, record)
    throw new RegistryError(403, blockedMessage(decision, facts.packageName, facts.version, request))
  }
  return record
}

/**
 * A `package.published` or `package.unlisted` event; `file` for ecosystems that
 * upload one file per request (its path below the firewall prefix: Maven's repository path,
 * PyPI's `files/{project}/{filename}`).
 */
export function packageEvent(
  request: ProxyRequest,
  type: 'package.published' | 'package.unlisted',
  facts: Pick<PackageVersionFacts, 'ecosystem' | 'packageName' | 'version'>,
  upstream: string,
  file?: string,
): NamespaceEvent {
  return makeEvent(request.services.clock, request.ns, type, {
    firewall: request.firewall.id,
    ecosystem: facts.ecosystem,
    packageName: facts.packageName,
    version: facts.version,
    actor: actorOf(request.principal, request.meta),
    upstream,
    ...(file ? { file } : {}),
  })
}

/**
 * Runs an ecosystem handler so that refusals also carry their text in the HTTP reason phrase:
 * pip, twine, Maven and NuGet print the status line, not a JSON body.
 */
export async function withReasonPhrase(request: ProxyRequest, handle: () => Promise<void>): Promise<void> {
  try {
    await handle()
  } catch (error) {
    const res = request.response
    if (error instanceof RegistryError && !res.headersSent) res.statusMessage = reasonPhrase(error.message)
    throw error
  }
}

/** Longest reason phrase sent; clients and proxies cut longer status lines. */
const REASON_LIMIT = 500
/** What a shortened phrase keeps of its end: a block message's request id and exception link. */
const REASON_TAIL = 240

/**
 * A status-line-safe text: Latin-1 printable, one line, bounded. A long text loses its middle
 * (a long advisory finding), never its end, where a block names the request id and the link.
 * @example reasonPhrase('fw-evil@1.0 is blocked ... Request an exception: https://...')
 */
export function reasonPhrase(message: string): string {
  const line = message.replace(/[^\x20-\x7e\xa0-\xff]+/g, ' ')
  if (line.length <= REASON_LIMIT) return line
  return `${line.slice(0, REASON_LIMIT - REASON_TAIL - 5)} ... ${line.slice(-REASON_TAIL)}`
}
