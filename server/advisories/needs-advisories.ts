import type { Rule, Selector } from '../firewall/schema'

/**
 * Whether a selector (or one nested in all/any/not) needs advisory data.
 * @example needsAdvisories({ function: { name: 'malware' } }) // true
 */
export function needsAdvisories(selector: Selector): boolean {
  const fn = selector.function
  if (fn.name === 'vulnerability' || fn.name === 'malware') return true
  if (fn.name === 'all' || fn.name === 'any') return fn.selectors.some(needsAdvisories)
  if (fn.name === 'not') return needsAdvisories(fn.selector)
  return false
}

/** Whether a rule decides on advisory data. */
export const ruleNeedsAdvisories = (rule: Pick<Rule, 'selector'>): boolean => needsAdvisories(rule.selector)
