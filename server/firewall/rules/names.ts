import type { Ecosystem } from '../schema'
import { ecosystemProfile } from '../ecosystems'

/**
 * The form under which a registry treats two package names as the same package, so that
 * rules, exceptions and advisories compare names the way the registry does (per ecosystem:
 * see server/firewall/ecosystems.ts).
 * @example normalizePackageName('pypi', 'Foo_Bar.baz') // 'foo-bar-baz'
 */
export function normalizePackageName(ecosystem: Ecosystem, name: string): string {
  return ecosystemProfile(ecosystem).normalizeName(name)
}
