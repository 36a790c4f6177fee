import { createAdvisoryIndex } from '../../server/advisories/index-build'
import { parseOsvRecord } from '../../server/advisories/osv'
import type { Advisory } from '../../server/advisories/types'
import type { EvaluationContext, PackageVersionFacts } from '../../server/firewall/rules/types'
import { Exception, Firewall, Rule, type Selector } from '../../server/firewall/schema'

/** A fixed clock: 2025-06-01T00:00:00Z. */
export const NOW = Date.parse('2025-06-01T00:00:00Z')

export function facts(overrides: Partial<PackageVersionFacts> = {}): PackageVersionFacts {
  return { ecosystem: 'npm', packageName: 'left-pad', version: '1.3.0', ...overrides }
}

/** Parses an OSV record and fails loudly if it is not an advisory. */
export function advisory(record: Record<string, unknown>): Advisory {
  const result = parseOsvRecord(record)
  if (result.kind !== 'advisory') throw new Error(`fixture is not an advisory: ${JSON.stringify(result)}`)
  return result.advisory
}

/** An OSV record affecting npm `name` from `introduced` up to (excluding) `fixed`. */
export function osvRecord(
  id: string,
  name: string,
  extra: Record<string, unknown> = {},
  events: Record<string, string>[] = [{ introduced: '0' }, { fixed: '2.0.0' }],
): Record<string, unknown> {
  return {
    id,
    summary: `${id} summary`,
    affected: [{ package: { ecosystem: 'npm', name }, ranges: [{ type: 'SEMVER', events }] }],
    ...extra,
  }
}

export function context(
  overrides: Partial<EvaluationContext> & { records?: Record<string, unknown>[] } = {},
): EvaluationContext {
  const { records = [], ...rest } = overrides
  return {
    now: NOW,
    licenseSets: new Map([['permissive', ['MIT', 'ISC', 'Apache-2.0', 'BSD-3-Clause']]]),
    advisories: createAdvisoryIndex(records.map(advisory)),
    ...rest,
  }
}

export function rule(id: string, selector: Selector, extra: Record<string, unknown> = {}): Rule {
  return Rule.parse({ id, executionPhase: 'download', selector, description: `rule ${id}`, ...extra })
}

export function exception(
  id: string,
  ruleId: string,
  selector: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Exception {
  return Exception.parse({ id, rule: ruleId, selector, ...extra })
}

export function firewall(id: string, version: number, rules: Rule[], exceptions: Exception[] = []): Firewall {
  return Firewall.parse({
    id,
    version,
    ecosystem: 'npm',
    name: id,
    description: '',
    upstreams: [],
    rules,
    exceptions,
    permissions: {},
    extends: [],
    updatedAt: '2025-01-01T00:00:00Z',
  })
}

export const sel = {
  name: (...patterns: string[]): Selector => ({ function: { name: 'packageName', patterns } }),
  range: (pkg: string, range: string): Selector => ({ function: { name: 'versionRange', package: pkg, range } }),
  age: (duration: string): Selector => ({ function: { name: 'minimumAge', duration } }),
  license: (licenseSet: string, mode: 'allow' | 'deny'): Selector => ({
    function: { name: 'license', licenseSet, mode },
  }),
  deprecated: (): Selector => ({ function: { name: 'deprecated' } }),
  installScripts: (): Selector => ({ function: { name: 'installScripts' } }),
  vulnerability: (
    args: { minSeverity?: 'low' | 'moderate' | 'high' | 'critical'; minCvss?: number } = {},
  ): Selector => ({
    function: { name: 'vulnerability', ...args },
  }),
  malware: (): Selector => ({ function: { name: 'malware' } }),
  all: (...selectors: Selector[]): Selector => ({ function: { name: 'all', selectors } }),
  any: (...selectors: Selector[]): Selector => ({ function: { name: 'any', selectors } }),
  not: (selector: Selector): Selector => ({ function: { name: 'not', selector } }),
}
