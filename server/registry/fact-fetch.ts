import type { Upstream } from '../firewall/schema'
import { RegistryError, RETRY_AFTER_SECONDS } from './responses'
import { UpstreamUnavailable } from './upstream/client'
import { UpstreamTooLarge } from './upstream/body-limit'
import { upstreamPieces } from './upstream/body-text'
import { parseJsonCooperatively, TooManyMembers, type JsonText } from '../common/cooperative-json'
import { UPSTREAM_MAX_MEMBERS, UpstreamTooManyMembers } from './upstream/member-limit'

/**
 * Facts a rule needs (license, publish time, advisory data) fail closed:
 * when fetching one failed the request is refused naming what is missing, never decided as if
 * the fact were absent. A fact the upstream simply does not have is no failure: the rule's
 * own semantics decide about a missing one.
 */

/**
 * The fact could not be fetched (unreachable, timeout, 5xx, 408, 429): 503, the client retries.
 * @example factUnavailable('the license of demo 1.0', 'upstream pypi', 'status 500')
 */
export function factUnavailable(what: string, source: string, reason: string): RegistryError {
  return new RegistryError(503, `${what} could not be fetched from ${source} (${reason}); retry later`, {
    'retry-after': String(RETRY_AFTER_SECONDS),
  })
}

/** The upstream answered, but with something that cannot be read: 502. */
export function factUnreadable(what: string, upstream: string, reason: string): RegistryError {
  return new RegistryError(502, `${what} from upstream ${upstream} cannot be read (${reason})`)
}

/** Statuses that mean "ask again later", not "there is nothing here". */
export const RETRY_STATUSES = new Set([408, 429])

/**
 * A JSON document holding a fact, or undefined when the upstream does not have one for us (404
 * and every other 4xx: no such API, no such release, not ours to read). A failed fetch throws
 * `factUnavailable`; a body that is not JSON throws `factUnreadable`. Either failure also goes to
 * `failures` (the request's list, which the handler writes to the firewall log).
 * @example const doc = await fetchFactDocument('the license of demo 1.0', upstream, () => callUpstream(request.scope.transport, upstream, url), request.scope.failures)
 */
export async function fetchFactDocument(
  what: string,
  upstream: Upstream,
  call: () => Promise<Response>,
  failures: UpstreamUnavailable[] = [],
): Promise<unknown> {
  const failed = (reason: string, error?: UpstreamUnavailable) => {
    failures.push(error ?? new UpstreamUnavailable(upstream.id, reason))
    return factUnavailable(what, `upstream ${upstream.id}`, reason)
  }
  let response: Response
  try {
    response = await call()
  } catch (error) {
    if (error instanceof UpstreamUnavailable) throw failed(error.reason, error)
    throw error
  }
  if (!response.ok) {
    await response.arrayBuffer().catch(() => undefined)
    if (RETRY_STATUSES.has(response.status)) throw failed(`status ${response.status}`)
    return undefined
  }
  let text: string[]
  try {
    text = await upstreamPieces(response)
  } catch (error) {
    if (error instanceof UpstreamTooLarge) throw error
    // The connection broke mid-body.
    throw failed((error as Error).message || 'body not received')
  }
  try {
    return await parseFactJson(text, what, upstream.id)
  } catch (error) {
    failures.push(new UpstreamUnavailable(upstream.id, 'answer not JSON'))
    throw error
  }
}

/**
 * Parses an upstream JSON body; anything else is `factUnreadable`. Large bodies are parsed in
 * slices of event-loop time (common/cooperative-json.ts): an upstream's answer size is its choice.
 * A record of more than `UPSTREAM_MAX_MEMBERS` members is `UpstreamTooManyMembers` (502).
 */
export async function parseFactJson(text: JsonText, what: string, upstream: string): Promise<unknown> {
  try {
    return await parseJsonCooperatively(text, undefined, { maxMembers: UPSTREAM_MAX_MEMBERS })
  } catch (error) {
    if (error instanceof TooManyMembers) throw new UpstreamTooManyMembers(upstream, what)
    throw factUnreadable(what, upstream, 'not JSON')
  }
}

/** Parses an upstream body that must be a JSON object (a packument, a project page). */
export async function parseFactObject(
  text: JsonText,
  what: string,
  upstream: string,
): Promise<Record<string, unknown>> {
  const doc = await parseFactJson(text, what, upstream)
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw factUnreadable(what, upstream, 'not a JSON object')
  return doc as Record<string, unknown>
}
