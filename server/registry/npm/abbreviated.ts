import { INSTALL_SCRIPTS } from '../../firewall/rules/selectors'
import type { Manifest, Packument } from './types'
import { TimeSlice } from '../../common/time-slice'
import { eachOwn, setOwn } from '../../common/own'

/**
 * Version fields of npm's abbreviated metadata (`application/vnd.npm.install-v1+json`), per the
 * registry's package-metadata docs plus what the public registry also sends today (`funding`,
 * `license`, `libc`, `acceptDependencies`).
 */
const ABBREVIATED_VERSION_FIELDS = [
  'name',
  'version',
  'deprecated',
  'dependencies',
  'optionalDependencies',
  'devDependencies',
  'bundleDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'acceptDependencies',
  'bin',
  'directories',
  'dist',
  'engines',
  '_hasShrinkwrap',
  'hasInstallScript',
  'os',
  'cpu',
  'libc',
  'funding',
  'license',
] as const

function abbreviateVersion(manifest: Manifest): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of ABBREVIATED_VERSION_FIELDS) {
    if (manifest[field] !== undefined) out[field] = manifest[field]
  }
  // Older manifests spell it `bundledDependencies`; the abbreviated form uses one spelling.
  if (out.bundleDependencies === undefined && manifest.bundledDependencies !== undefined) {
    out.bundleDependencies = manifest.bundledDependencies
  }
  // The abbreviated form drops `scripts`, so npm learns about install scripts only from this flag.
  if (out.hasInstallScript === undefined) {
    const scripts = manifest.scripts ?? {}
    if (INSTALL_SCRIPTS.some((name) => typeof scripts[name] === 'string' && scripts[name] !== '')) {
      out.hasInstallScript = true
    }
  }
  return out
}

/**
 * The abbreviated ("corgi") document npm requests with `Accept: application/vnd.npm.install-v1+json`:
 * `name`, `modified`, `dist-tags`, `versions` with install-relevant fields only. The firewall's
 * `policyRestrictions` is kept so that hidden versions stay explainable.
 * Version by version, taking turns with the rest of the process (`slice`).
 * @example (await toAbbreviated(packument)).versions['1.0.0'].dist.tarball
 */
export async function toAbbreviated(
  packument: Packument,
  slice = new TimeSlice(),
): Promise<
  Record<string, unknown> & {
    name: string
    'dist-tags': Record<string, string>
    versions: Record<string, Record<string, unknown>>
  }
> {
  const versions: Record<string, Record<string, unknown>> = {}
  await eachOwn(
    packument.versions,
    (version, manifest) => setOwn(versions, version, abbreviateVersion(manifest)),
    slice,
  )
  const modified = packument.time?.modified
  return {
    name: packument.name,
    ...(modified ? { modified } : {}),
    'dist-tags': packument['dist-tags'] ?? {},
    versions,
    ...(packument.policyRestrictions ? { policyRestrictions: packument.policyRestrictions } : {}),
  }
}
