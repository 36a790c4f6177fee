import { parseDuration } from '../../common/duration'
import { SEVERITY_MIN_SCORE, SEVERITY_RANK } from '../../advisories/cvss'
import type { Advisory } from '../../advisories/types'
import type { Selector, SelectorFunction } from '../schema'
import { matchesGlob } from './glob'
import { licenseSatisfied, licenseShown } from './license'
import { ecosystemProfile } from '../ecosystems'
import { normalizePackageName } from './names'
import { inVersionRange } from './versions/range'
import type { EvaluationContext, PackageVersionFacts, SelectorResult } from './types'

type Fn<N extends SelectorFunction['name']> = Extract<SelectorFunction, { name: N }>

const NO_MATCH: SelectorResult = { matched: false }

/** Lifecycle scripts npm runs on install (https://docs.npmjs.com/cli/using-npm/scripts). */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'] as const

function packageName(fn: Fn<'packageName'>, facts: PackageVersionFacts): SelectorResult {
  const name = normalizePackageName(facts.ecosystem, facts.packageName)
  const pattern = fn.patterns.find((p) => matchesGlob(normalizePackageName(facts.ecosystem, p), name))
  return pattern === undefined ? NO_MATCH : { matched: true, message: `package name matches ${pattern}` }
}

// npm: prereleases are outside a range unless the range names them (semver's default). Other
// ecosystems compare with their own ordering and count pre-releases in (`rangesIncludePrereleases`).
// A version the ordering cannot parse never matches: the rule cannot say anything about it.
function versionRange(fn: Fn<'versionRange'>, facts: PackageVersionFacts): SelectorResult {
  const same =
    normalizePackageName(facts.ecosystem, fn.package) === normalizePackageName(facts.ecosystem, facts.packageName)
  const includePrerelease = ecosystemProfile(facts.ecosystem).rangesIncludePrereleases
  if (!same || !inVersionRange(facts.ecosystem, facts.version, fn.range, includePrerelease)) return NO_MATCH
  return { matched: true, message: `version ${facts.version} is in ${fn.range}` }
}

// Fail closed: a version whose publish time is unknown (or unparseable) counts as too new.
function minimumAge(fn: Fn<'minimumAge'>, facts: PackageVersionFacts, ctx: EvaluationContext): SelectorResult {
  const published = facts.published ? Date.parse(facts.published) : Number.NaN
  if (Number.isNaN(published)) {
    return { matched: true, message: `publish time unknown, minimum age ${fn.duration} cannot be verified` }
  }
  const ageMs = ctx.now - published
  if (ageMs >= parseDuration(fn.duration)) return NO_MATCH
  const hours = Math.max(0, Math.floor(ageMs / 3_600_000))
  return { matched: true, message: `published ${hours}h ago, younger than ${fn.duration}` }
}

// A missing, unparseable or oversized (CONTRACT section 8) license is "not allowed": it matches an allow-list rule and never
// matches a deny-list rule. An unknown license set counts as empty.
function license(fn: Fn<'license'>, facts: PackageVersionFacts, ctx: EvaluationContext): SelectorResult {
  const satisfied = licenseSatisfied(facts.license, ctx.licenseSets.get(fn.licenseSet) ?? [])
  const shown = licenseShown(facts.license)
  if (fn.mode === 'allow') {
    if (satisfied === true) return NO_MATCH
    return { matched: true, message: `license ${shown} is not allowed by license set ${fn.licenseSet}` }
  }
  if (satisfied !== true) return NO_MATCH
  return { matched: true, message: `license ${shown} is denied by license set ${fn.licenseSet}` }
}

function deprecated(facts: PackageVersionFacts): SelectorResult {
  const value = facts.deprecated
  if (value === undefined || value === false || value === '') return NO_MATCH
  return { matched: true, message: typeof value === 'string' ? `deprecated: ${value}` : 'deprecated' }
}

function installScripts(facts: PackageVersionFacts): SelectorResult {
  const scripts = INSTALL_SCRIPTS.filter((name) => (facts.scripts?.[name] ?? '').trim() !== '')
  if (scripts.length === 0 && facts.hasInstallScript !== true) return NO_MATCH
  const names = scripts.length > 0 ? scripts.join(', ') : 'hasInstallScript'
  return { matched: true, output: { scripts: [...scripts] }, message: `declares install scripts (${names})` }
}

// An advisory with neither severity nor score counts as meeting any threshold (fail closed);
// a severity-only advisory is compared with minCvss through the lowest score of its band.
function meetsThreshold(advisory: Advisory, fn: Fn<'vulnerability'>): boolean {
  if (fn.minSeverity && advisory.severity && SEVERITY_RANK[advisory.severity] < SEVERITY_RANK[fn.minSeverity]) {
    return false
  }
  if (fn.minCvss !== undefined) {
    const score = advisory.cvss ?? (advisory.severity ? SEVERITY_MIN_SCORE[advisory.severity] : undefined)
    if (score !== undefined && score < fn.minCvss) return false
  }
  return true
}

/** Where a reader finds the full advisory. */
const advisoryLink = (id: string) => `https://osv.dev/vulnerability/${encodeURIComponent(id)}`

function describeAdvisory(advisory: Advisory, severity: string): string {
  const summary = advisory.summary ? ` ${advisory.summary.slice(0, 200)}` : ''
  return `${advisory.id} (${severity})${summary}, ${advisoryLink(advisory.id)}`
}

function vulnerability(fn: Fn<'vulnerability'>, facts: PackageVersionFacts, ctx: EvaluationContext): SelectorResult {
  const { vulnerabilities } = ctx.advisories.lookup(facts.ecosystem, facts.packageName, facts.version)
  const hits = vulnerabilities.filter((advisory) => meetsThreshold(advisory, fn))
  if (hits.length === 0) return NO_MATCH
  const advisories = hits.map((a) => ({
    id: a.id,
    severity: a.severity ?? 'unknown',
    ...(a.cvss !== undefined ? { cvss: a.cvss } : {}),
    ...(a.summary ? { summary: a.summary } : {}),
    url: advisoryLink(a.id),
  }))
  // The block message names the first advisory and how many there are (npm prints one line).
  const first = describeAdvisory(hits[0], advisories[0].severity)
  const message =
    hits.length === 1 ? `known vulnerability ${first}` : `${hits.length} known vulnerabilities, first ${first}`
  return { matched: true, output: { advisories }, message }
}

function malware(facts: PackageVersionFacts, ctx: EvaluationContext): SelectorResult {
  const { malware: reports } = ctx.advisories.lookup(facts.ecosystem, facts.packageName, facts.version)
  if (reports.length === 0) return NO_MATCH
  const finding = reports[0].summary ?? `Malicious code in ${facts.packageName}`
  const signals = reports.map((report) => report.id)
  const advisories = reports.map((a) => ({
    id: a.id,
    severity: a.severity ?? 'critical',
    ...(a.summary ? { summary: a.summary } : {}),
    url: advisoryLink(a.id),
  }))
  const more = reports.length > 1 ? ` and ${reports.length - 1} more report${reports.length > 2 ? 's' : ''}` : ''
  return {
    matched: true,
    output: { finding, scanner: 'osv', confidence: 'high', signals, advisories },
    message: `malicious package: ${finding} (${reports[0].id}${more}, ${advisoryLink(reports[0].id)})`,
  }
}

// Outputs of the matching children are merged so that e.g. `all(vulnerability, not(...))`
// still reports its advisories.
function combine(results: SelectorResult[]): SelectorResult {
  const matched = results.filter((r) => r.matched)
  const output = Object.assign({}, ...matched.map((r) => r.output ?? {})) as Record<string, unknown>
  const messages = matched.map((r) => r.message).filter((m): m is string => Boolean(m))
  return {
    matched: true,
    ...(Object.keys(output).length > 0 ? { output } : {}),
    ...(messages.length > 0 ? { message: messages.join('; ') } : {}),
  }
}

/**
 * Evaluates one selector against one package version. Pure: time, license sets and advisories
 * come from `ctx`.
 * @example matchSelector({ function: { name: 'deprecated' } }, facts, ctx).matched
 */
export function matchSelector(selector: Selector, facts: PackageVersionFacts, ctx: EvaluationContext): SelectorResult {
  const fn = selector.function
  switch (fn.name) {
    case 'packageName':
      return packageName(fn, facts)
    case 'versionRange':
      return versionRange(fn, facts)
    case 'minimumAge':
      return minimumAge(fn, facts, ctx)
    case 'license':
      return license(fn, facts, ctx)
    case 'deprecated':
      return deprecated(facts)
    case 'installScripts':
      return installScripts(facts)
    case 'vulnerability':
      return vulnerability(fn, facts, ctx)
    case 'malware':
      return malware(facts, ctx)
    case 'all': {
      const results = fn.selectors.map((s) => matchSelector(s, facts, ctx))
      return results.every((r) => r.matched) ? combine(results) : NO_MATCH
    }
    case 'any': {
      const results = fn.selectors.map((s) => matchSelector(s, facts, ctx))
      return results.some((r) => r.matched) ? combine(results) : NO_MATCH
    }
    case 'not':
      return matchSelector(fn.selector, facts, ctx).matched ? NO_MATCH : { matched: true }
  }
}
