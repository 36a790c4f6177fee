import type { AdvisoryLookup } from '../../advisories/lookup'
import type { Ecosystem } from '../schema'

/** What a rule can know about one package version; every field beyond the identity is optional. */
export interface PackageVersionFacts {
  ecosystem: Ecosystem
  packageName: string
  version: string
  /** Upstream publish time, ISO 8601. */
  published?: string
  /** SPDX expression as the package declares it. */
  license?: string
  /** npm: the deprecation message (an empty string means "not deprecated"). */
  deprecated?: string | boolean
  scripts?: Record<string, string>
  /** npm registry flag set when the package runs install-time scripts (incl. node-gyp). */
  hasInstallScript?: boolean
}

/** Everything a decision depends on besides the rules: injected so the engine stays pure. */
export interface EvaluationContext {
  /** Current time in epoch milliseconds. */
  now: number
  /** License set id to the SPDX license ids it contains. */
  licenseSets: ReadonlyMap<string, readonly string[]>
  advisories: AdvisoryLookup
}

/** The outcome of one selector on one version. */
export interface SelectorResult {
  matched: boolean
  /** Rule-specific detail for the event's `output` (advisories, malware finding). */
  output?: Record<string, unknown>
  /** Human-readable reason, e.g. "published 2h ago, younger than 72h". */
  message?: string
}
