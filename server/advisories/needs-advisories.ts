import type { Rule, Selector, SelectorFunction } from '../firewall/schema'

/**
 * Which selector functions decide on advisory data, one entry per function: a new selector does
 * not build until it says (the registry fails closed, 503, only for rules that need the data).
 */
const DECIDES_ON_ADVISORIES = {
  packageName: false,
  versionRange: false,
  minimumAge: false,
  license: false,
  deprecated: false,
  installScripts: false,
  vulnerability: true,
  malware: true,
  all: false,
  any: false,
  not: false,
} as const satisfies Record<SelectorFunction['name'], boolean>

/**
 * Whether a selector (or one nested in all/any/not) needs advisory data.
 * @example needsAdvisories({ function: { name: 'malware' } }) // true
 */
export function needsAdvisories(selector: Selector): boolean {
  const fn = selector.function
  if (DECIDES_ON_ADVISORIES[fn.name]) return true
  if (fn.name === 'all' || fn.name === 'any') return fn.selectors.some(needsAdvisories)
  if (fn.name === 'not') return needsAdvisories(fn.selector)
  return false
}

/** Whether a rule decides on advisory data. */
export const ruleNeedsAdvisories = (rule: Pick<Rule, 'selector'>): boolean => needsAdvisories(rule.selector)
