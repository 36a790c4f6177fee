import type { Selector } from '../schema'
import type { FirewallLayer } from './evaluate'

/**
 * Whether a selector (or one nested in all/any/not) reads the namespace's license sets: only
 * `license` does.
 * @example readsLicenseSets({ function: { name: 'license', licenseSet: 'oss', mode: 'allow' } }) // true
 */
export function readsLicenseSets(selector: Selector): boolean {
  const fn = selector.function
  if (fn.name === 'license') return true
  if (fn.name === 'all' || fn.name === 'any') return fn.selectors.some(readsLicenseSets)
  if (fn.name === 'not') return readsLicenseSets(fn.selector)
  return false
}

/**
 * Whether any rule of a firewall chain reads license sets. When none does, a decision needs no
 * read of them (a registry request on a firewall without license rules skips that round trip).
 */
export const chainReadsLicenseSets = (chain: readonly FirewallLayer[]): boolean =>
  chain.some((layer) => layer.firewall.rules.some((rule) => readsLicenseSets(rule.selector)))
