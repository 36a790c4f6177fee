import { eachOwn, setOwn } from '../../common/own'
import { TimeSlice } from '../../common/time-slice'
import type { Decision } from '../../firewall/rules/evaluate'
import type { Manifest, Packument } from './types'

/**
 * The rule blocking each blocked version of a packument (`decide` as a tarball request decides).
 * Nothing is logged: a version is only a block when it is downloaded.
 * @example await blockedVersions(doc, (v, m) => evaluate(chain, ['download', 'versions'], factsFromManifest(doc.name, v, m, doc), ctx))
 */
export async function blockedVersions(
  packument: Packument,
  decide: (version: string, manifest: Manifest) => Decision,
  slice = new TimeSlice(),
): Promise<Map<string, string>> {
  const blocked = new Map<string, string>()
  await eachOwn(
    packument.versions ?? {},
    (version, manifest) => {
      const decision = decide(version, manifest)
      if (decision.outcome === 'blocked') blocked.set(version, decision.rule?.id ?? 'unknown')
    },
    slice,
  )
  return blocked
}

/**
 * The packument with the `dist.tarball` of each blocked version replaced by `notice(version,
 * ruleId)` (tarball-notice.ts); every other field as rendered.
 */
export async function pointAtNotices(
  packument: Packument,
  blocked: ReadonlyMap<string, string>,
  notice: (version: string, ruleId: string) => string,
  slice = new TimeSlice(),
): Promise<Packument> {
  const versions: Record<string, Manifest> = {}
  await eachOwn(
    packument.versions ?? {},
    (version, manifest) => {
      const ruleId = blocked.get(version)
      setOwn(
        versions,
        version,
        ruleId === undefined ? manifest : { ...manifest, dist: { ...manifest.dist, tarball: notice(version, ruleId) } },
      )
    },
    slice,
  )
  return { ...packument, versions }
}
