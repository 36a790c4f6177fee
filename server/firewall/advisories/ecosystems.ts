import type { Ecosystem } from '../schema'

/** Our ecosystem names and OSV's (https://ossf.github.io/osv-schema/#affectedpackage-field). */
export const OSV_ECOSYSTEMS: Record<Ecosystem, string> = { npm: 'npm', pypi: 'PyPI', maven: 'Maven', nuget: 'NuGet' }

const FROM_OSV = new Map(Object.entries(OSV_ECOSYSTEMS).map(([ours, osv]) => [osv, ours as Ecosystem]))

/**
 * Our ecosystem for an OSV ecosystem name; undefined for ecosystems the firewall does not serve.
 * @example fromOsvEcosystem('PyPI') // 'pypi'
 */
export function fromOsvEcosystem(osv: string): Ecosystem | undefined {
  return FROM_OSV.get(osv)
}
