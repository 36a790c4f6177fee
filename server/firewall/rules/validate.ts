import type { Ecosystem, Rule, Selector } from '../schema'
import { ecosystemProfile, ecosystemsWith } from '../ecosystems'
import { rangeProblem } from './versions/range'

/** A problem with a rule for a firewall's ecosystem: `error` should be rejected, `warning` shown. */
interface RuleProblem {
  level: 'error' | 'warning'
  /** Where in the rule, e.g. `selector.function.selectors[1].function`. */
  path: string
  message: string
}

function walk(selector: Selector, path: string, visit: (selector: Selector, path: string) => void): void {
  visit(selector, path)
  const fn = selector.function
  if (fn.name === 'all' || fn.name === 'any') {
    fn.selectors.forEach((child, i) => walk(child, `${path}.function.selectors[${i}]`, visit))
  } else if (fn.name === 'not') {
    walk(fn.selector, `${path}.function.selector`, visit)
  }
}

/**
 * Checks a (schema-valid) rule against the firewall's ecosystem. Kept deliberately small: it
 * flags selectors whose facts the ecosystem never supplies, which would otherwise silently
 * never match (or, for fail-closed selectors, always match).
 * @example validateRuleForEcosystem(rule, 'maven') // [{ level: 'error', path: 'selector', ... }]
 */
export function validateRuleForEcosystem(rule: Rule, ecosystem: Ecosystem): RuleProblem[] {
  const problems: RuleProblem[] = []
  // Which facts the ecosystem's metadata gives the proxy: see the profiles in ../ecosystems.ts.
  const { facts } = ecosystemProfile(ecosystem)
  walk(rule.selector, 'selector', (selector, path) => {
    const fn = selector.function
    if ((fn.name === 'deprecated' || fn.name === 'installScripts') && !facts[fn.name]) {
      const message = `${fn.name} applies to ${ecosystemsWith(fn.name).join(', ')} packages only`
      problems.push({ level: 'error', path, message })
    }
    if (fn.name === 'license' && facts.license === null) {
      problems.push({ level: 'error', path, message: `license metadata is not available for ${ecosystem}` })
    }
    if (fn.name === 'minimumAge' && facts.publishTime === 'often-missing') {
      problems.push({
        level: 'warning',
        path,
        message: `${ecosystem} metadata often lacks publish times; versions without one count as too new`,
      })
    }
    if (fn.name === 'versionRange') {
      const problem = rangeProblem(ecosystem, fn.range)
      if (problem) problems.push({ level: 'error', path, message: `versionRange ${fn.range}: ${problem}` })
    }
  })
  return problems
}

/**
 * The license set ids a selector references, each once, so the API can reject unknown sets.
 * @example collectLicenseSetIds({ function: { name: 'license', licenseSet: 'oss', mode: 'allow' } }) // ['oss']
 */
export function collectLicenseSetIds(selector: Selector): string[] {
  const ids = new Set<string>()
  walk(selector, 'selector', (s) => {
    if (s.function.name === 'license') ids.add(s.function.licenseSet)
  })
  return [...ids]
}
