import { eachOwn, setOwn } from '../../common/own'
import { TimeSlice } from '../../common/time-slice'
import { tarballFileName } from './tarball-path'
import { TagRepair } from './tag-repair'
import type { Manifest, Packument, PolicyRestriction, VersionDecision } from './types'

export type { Dist, Manifest, Packument, PolicyRestriction, VersionDecision } from './types'
export { factsFromManifest, licenseExpressionOf } from './facts'
export { parseTarballPath, tarballFileName, type TarballPath } from './tarball-path'
export { toAbbreviated } from './abbreviated'

/**
 * Removes every version whose decision is `blocked` from `versions` and `time`, repairs
 * `dist-tags`, and lists what was removed under `policyRestrictions`. Returns a new object.
 * Version by version, taking turns with the rest of the process (`slice`): an upstream decides
 * how many versions there are.
 * @example await filterPackument(doc, (v, m) => evaluate(chain, ['versions'], factsFromManifest(doc.name, v, m, doc), ctx))
 */
export async function filterPackument(
  packument: Packument,
  decideVersion: (version: string, manifest: Manifest) => VersionDecision,
  slice = new TimeSlice(),
): Promise<Packument> {
  // Built with setOwn, never by assignment: versions and tags are upstream strings (`__proto__`
  // would be lost). A Map where a key is looked up (`constructor` would be found on every object).
  const versions: Record<string, Manifest> = {}
  const kept: string[] = []
  const restrictions = new Map<string, PolicyRestriction>()
  await eachOwn(
    packument.versions,
    (version, manifest) => {
      const decision = decideVersion(version, manifest)
      if (decision.outcome === 'blocked') {
        restrictions.set(version, { ...(decision.rule ? { rule: decision.rule.id } : {}), reason: decision.message })
      } else {
        setOwn(versions, version, manifest)
        kept.push(version)
      }
    },
    slice,
  )
  if (restrictions.size === 0) return packument

  let repair: TagRepair | undefined
  const distTags: Record<string, string> = {}
  for (const [tag, target] of Object.entries(packument['dist-tags'] ?? {})) {
    // A tag that already pointed nowhere is left alone: the upstream's problem, not ours.
    if (restrictions.has(target)) repair ??= await TagRepair.of(kept, slice)
    const repaired = restrictions.has(target) ? repair!.target(tag, target) : target
    if (repaired !== undefined) setOwn(distTags, tag, repaired)
    await slice.step()
  }

  const result: Packument = { ...packument, 'dist-tags': distTags, versions }
  if (packument.time) {
    // `created`, `modified` and any other non-version keys stay.
    const time: Record<string, string> = {}
    await eachOwn(packument.time, (key, value) => restrictions.has(key) || setOwn(time, key, value), slice)
    result.time = time
  }
  const restricted: Record<string, PolicyRestriction> = {}
  await eachOwn(packument.policyRestrictions?.versions, (key, value) => setOwn(restricted, key, value), slice)
  for (const [version, why] of restrictions) {
    setOwn(restricted, version, why)
    await slice.step()
  }
  result.policyRestrictions = { versions: restricted }
  return result
}

/** A packument whose tarball URLs point at the proxy, and where each file really lives. */
interface RewrittenPackument {
  packument: Packument
  /** Rewritten file name (`name-1.0.0.tgz`) to the upstream tarball URL. */
  tarballs: Map<string, string>
}

/**
 * Points every `dist.tarball` at `${proxyBaseUrl}${name}/-/${unscoped}-${version}.tgz`
 * (`proxyBaseUrl` = `{origin}/registry/{ns}/{fw}/`; scoped names keep `@scope/name`). The file
 * name is derived from name and version rather than copied from the upstream URL, because some
 * registries serve tarballs under opaque paths and `parseTarballPath` must recover the version.
 * `integrity` and `shasum` are untouched.
 * @example (await rewriteTarballUrls(doc, 'https://fw.example/registry/acme/main/')).tarballs.get('pkg-1.0.0.tgz')
 */
export async function rewriteTarballUrls(
  packument: Packument,
  proxyBaseUrl: string,
  slice = new TimeSlice(),
): Promise<RewrittenPackument> {
  const baseUrl = proxyBaseUrl.endsWith('/') ? proxyBaseUrl : `${proxyBaseUrl}/`
  const tarballs = new Map<string, string>()
  const versions: Record<string, Manifest> = {}
  await eachOwn(
    packument.versions,
    (version, manifest) => {
      const original = manifest.dist?.tarball
      if (typeof original !== 'string') return setOwn(versions, version, manifest)
      const file = tarballFileName(packument.name, version)
      tarballs.set(file, original)
      const tarball = `${baseUrl}${packument.name}/-/${file}`
      setOwn(versions, version, { ...manifest, dist: { ...manifest.dist, tarball } })
    },
    slice,
  )
  return { packument: { ...packument, versions }, tarballs }
}
