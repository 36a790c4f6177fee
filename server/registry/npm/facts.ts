import { own } from '../../common/own'
import type { PackageVersionFacts } from '../../firewall/rules/types'
import type { Manifest, Packument } from './types'

function licenseName(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() || undefined
  if (value && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string') {
    return (value as { type: string }).type.trim() || undefined
  }
  return undefined
}

/**
 * The SPDX expression a manifest declares: `license` as a string or legacy `{ type }`, else the
 * legacy `licenses` array joined with OR (the package is offered under any of them).
 * @example licenseExpressionOf({ licenses: [{ type: 'MIT' }, { type: 'Apache-2.0' }] }) // 'MIT OR Apache-2.0'
 */
export function licenseExpressionOf(manifest: Manifest): string | undefined {
  const single = licenseName(manifest.license)
  if (single) return single
  if (!Array.isArray(manifest.licenses)) return licenseName(manifest.licenses)
  const names = manifest.licenses.map(licenseName).filter((name): name is string => Boolean(name))
  if (names.length <= 1) return names[0]
  return names.map((name) => (/\s/.test(name) ? `(${name})` : name)).join(' OR ')
}

/**
 * The facts rules evaluate for one npm version, taken from its manifest and the packument's
 * `time` map.
 * @example factsFromManifest('left-pad', '1.3.0', doc.versions['1.3.0'], doc).published
 */
export function factsFromManifest(
  name: string,
  version: string,
  manifest: Manifest,
  packument?: Pick<Packument, 'time'>,
): PackageVersionFacts {
  const published = own(packument?.time, version)
  const license = licenseExpressionOf(manifest)
  const scripts = Object.fromEntries(
    Object.entries(manifest.scripts ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  )
  return {
    ecosystem: 'npm',
    packageName: name,
    version,
    ...(published ? { published } : {}),
    ...(license ? { license } : {}),
    ...(manifest.deprecated !== undefined ? { deprecated: manifest.deprecated } : {}),
    ...(Object.keys(scripts).length > 0 ? { scripts } : {}),
    ...(manifest.hasInstallScript === true ? { hasInstallScript: true } : {}),
  }
}
