import type { Ecosystem } from '../schema'

/**
 * The form under which a registry treats two package names as the same package, so that
 * rules, exceptions and advisories compare names the way the registry does.
 * npm and Maven names are case-sensitive; PyPI follows PEP 503; NuGet ids are case-insensitive.
 * @example normalizePackageName('pypi', 'Foo_Bar.baz') // 'foo-bar-baz'
 */
export function normalizePackageName(ecosystem: Ecosystem, name: string): string {
  switch (ecosystem) {
    case 'pypi':
      return name.toLowerCase().replace(/[-_.]+/g, '-')
    case 'nuget':
      return name.toLowerCase()
    default:
      return name
  }
}
