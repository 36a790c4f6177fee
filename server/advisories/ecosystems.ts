import { ECOSYSTEMS, type Ecosystem } from '../firewall/schema'
import { ecosystemForOsvName, ecosystemProfile } from '../firewall/ecosystems'

/** Our ecosystem names and OSV's (https://ossf.github.io/osv-schema/#affectedpackage-field). */
export const OSV_ECOSYSTEMS = Object.fromEntries(
  ECOSYSTEMS.map((ecosystem) => [ecosystem, ecosystemProfile(ecosystem).osvName]),
) as Record<Ecosystem, string>

/**
 * Our ecosystem for an OSV ecosystem name; undefined for ecosystems the firewall does not serve.
 * @example fromOsvEcosystem('PyPI') // 'pypi'
 */
export function fromOsvEcosystem(osv: string): Ecosystem | undefined {
  return ecosystemForOsvName(osv)
}
