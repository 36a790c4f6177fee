import { logger } from '../../app/logger'
import { mapOf, recordOf } from '../../common/own'
import type { AdvisoryLookup } from '../../advisories/lookup'
import type { Advisory, AffectedPackage } from '../../advisories/types'
import type { ProxyRequest } from '../proxy-request'
import { parseFactObject, RETRY_STATUSES } from '../fact-fetch'
import { upstreamPieces } from '../upstream/body-text'
import { readJson } from '../request-body'
import { RegistryError, sendJson } from '../responses'
import { callUpstream, upstreamAuthorization, upstreamUrl, UpstreamUnavailable } from '../upstream/client'
import { UpstreamTooLarge } from '../upstream/body-limit'

/** One entry of npm's bulk advisory answer (what `npm audit` reads). */
interface BulkAdvisory {
  id: string | number
  url: string
  title: string
  severity: string
  vulnerable_versions: string
  cwe: string[]
  cvss: { score: number; vectorString: string | null }
}

/** Package name -> advisories. A Map: `constructor` and `__proto__` are package names a client may ask about. */
type BulkAnswer = Map<string, BulkAdvisory[]>

/**
 * An OSV `affected` entry as a semver range: `introduced`/`fixed` pairs become
 * `>=a <b`, `last_affected` `<=c`, an open interval `>=a` (or `*`), listed versions exact.
 * @example vulnerableVersions({ ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '1.2.0' }] }], versions: [] }) // '<1.2.0'
 */
export function vulnerableVersions(affected: Pick<AffectedPackage, 'ranges' | 'versions'>): string {
  const parts: string[] = []
  for (const range of affected.ranges) {
    let start: string | undefined
    for (const event of range.events) {
      const lower = start && start !== '0' ? `>=${start} ` : ''
      if ('introduced' in event) start = event.introduced
      else {
        const upper =
          'fixed' in event
            ? `<${event.fixed}`
            : 'limit' in event
              ? `<${event.limit}`
              : 'last_affected' in event
                ? `<=${event.last_affected}`
                : null
        if (upper === null) continue
        parts.push(`${lower}${upper}`)
        start = undefined
      }
    }
    if (start !== undefined) parts.push(start === '0' ? '*' : `>=${start}`)
  }
  parts.push(...affected.versions)
  return parts.join(' || ') || '*'
}

function toBulk(advisory: Advisory, name: string): BulkAdvisory {
  const affected = advisory.affected.filter((a) => a.ecosystem === 'npm' && a.name === name)
  return {
    id: advisory.id,
    url: `https://osv.dev/vulnerability/${advisory.id}`,
    title: advisory.summary ?? (advisory.malware ? `Malicious code in ${name}` : advisory.id),
    severity: advisory.malware ? 'critical' : (advisory.severity ?? 'moderate'),
    vulnerable_versions: affected.map(vulnerableVersions).join(' || ') || '*',
    cwe: [],
    cvss: { score: advisory.cvss ?? 0, vectorString: advisory.cvssVector ?? null },
  }
}

/** The firewall's own advisories (ADVISORY_DIR) for the requested names and versions. */
function localBulkAdvisories(index: AdvisoryLookup, query: Record<string, unknown>): BulkAnswer {
  const answer: BulkAnswer = new Map()
  for (const [name, versions] of Object.entries(query)) {
    const found = new Map<string, Advisory>()
    for (const version of Array.isArray(versions) ? versions : []) {
      const { vulnerabilities, malware } = index.lookup('npm', name, String(version))
      for (const advisory of [...vulnerabilities, ...malware]) found.set(advisory.id, advisory)
    }
    if (found.size > 0)
      answer.set(
        name,
        [...found.values()].map((a) => toBulk(a, name)),
      )
  }
  return answer
}

const BULK_WHAT = 'the bulk advisories (npm audit)'

/**
 * The upstream's 2xx answer as a JSON object. An answer that cannot be read fails closed
 * (docs/security.md): 502 naming the upstream, never an audit that silently lacks the upstream's half.
 */
async function readBulkAnswer(
  response: Response,
  upstream: string,
  failures: UpstreamUnavailable[],
): Promise<Record<string, unknown>> {
  let text: string[]
  try {
    text = await upstreamPieces(response)
  } catch (error) {
    if (error instanceof UpstreamTooLarge) throw error
    // The connection broke mid-body: as if the upstream were unreachable.
    throw new UpstreamUnavailable(upstream, (error as Error).message || 'body not received')
  }
  try {
    return await parseFactObject(text, BULK_WHAT, upstream)
  } catch (error) {
    failures.push(new UpstreamUnavailable(upstream, 'answer not a JSON object'))
    throw error
  }
}

/**
 * `POST /-/npm/v1/security/advisories/bulk`: the first public upstream's answer merged with
 * the firewall's own advisory data (upstream entries first, ours added by id). Internal
 * upstreams are not asked (they rarely implement it). An upstream that is unreachable or answers
 * an error status (many registries have no such endpoint) only means the answer holds our data
 * alone; one that answers 2xx with something other than a JSON object is refused with 502.
 * Failures (unreachable, 5xx, 408, 429, an unreadable answer) are upstream_error entries in the
 * firewall log; a registry without the endpoint (404 and other 4xx) is not a failure.
 */
export async function serveBulkAdvisories(request: ProxyRequest): Promise<void> {
  const { raw, json } = await readJson(request, 10 * 1024 * 1024)
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new RegistryError(400, 'expected {"<name>": ["<version>", ...]}')
  const query = json as Record<string, unknown>
  let merged: BulkAnswer = new Map()
  const failures = request.scope.failures ?? []
  const upstream = request.firewall.upstreams.find((u) => !u.internal)
  if (upstream) {
    try {
      const response = await callUpstream(
        request.scope.transport,
        upstream,
        upstreamUrl(upstream, '-/npm/v1/security/advisories/bulk'),
        {
          method: 'POST',
          body: raw,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          authorization: upstreamAuthorization(upstream),
          timeoutMs: request.scope.timeoutMs,
        },
      )
      if (response.ok) merged = mapOf<BulkAdvisory[]>(await readBulkAnswer(response, upstream.id, failures))
      else {
        await response.arrayBuffer().catch(() => undefined)
        // A failing endpoint is a failed call (firewall log); one the registry lacks (4xx) is not.
        if (response.status >= 500 || RETRY_STATUSES.has(response.status))
          failures.push(new UpstreamUnavailable(upstream.id, `status ${response.status}`))
      }
    } catch (error) {
      if (!(error instanceof UpstreamUnavailable)) throw error
      failures.push(error)
      logger.warn('upstream bulk advisories unavailable', {
        requestId: request.meta.requestId,
        upstream: upstream.id,
        reason: error.reason,
      })
    }
  }
  for (const [name, advisories] of localBulkAdvisories(request.advisories, query)) {
    const upstreamEntries = merged.get(name)
    const ours = Array.isArray(upstreamEntries) ? upstreamEntries : []
    const known = new Set(ours.map((a) => String(a?.id)))
    merged.set(name, [...ours, ...advisories.filter((a) => !known.has(String(a.id)))])
  }
  sendJson(request, 200, recordOf(merged))
}
