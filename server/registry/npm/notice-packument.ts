import { eachOwn, setOwn } from '../../common/own'
import { TimeSlice } from '../../common/time-slice'
import type { Decision } from '../../firewall/rules/evaluate'
import type { Manifest, Packument } from './types'

/** The blocked versions of a packument, decided once for both uses below and for the whole-package refusal. */
export interface BlockedVersions {
  /** Each blocked version and the decision that blocks it, in the packument's order. */
  blocked: Map<string, Decision>
  /** Whether every version is blocked (false for a packument without versions). */
  every: boolean
}

/**
 * Decides each version of a packument (`decide` as a tarball request decides) and keeps the
 * blocked ones. Nothing is logged: a version is only a block when it is downloaded.
 * @example await blockedVersions(doc, (v, m) => evaluate(chain, ['download', 'versions'], factsFromManifest(doc.name, v, m, doc), ctx))
 */
export async function blockedVersions(
  packument: Packument,
  decide: (version: string, manifest: Manifest) => Decision,
  slice = new TimeSlice(),
): Promise<BlockedVersions> {
  const blocked = new Map<string, Decision>()
  let versions = 0
  await eachOwn(
    packument.versions ?? {},
    (version, manifest) => {
      versions++
      const decision = decide(version, manifest)
      if (decision.outcome === 'blocked') blocked.set(version, decision)
    },
    slice,
  )
  return { blocked, every: versions > 0 && blocked.size === versions }
}

/**
 * The packument with the `dist.tarball` of each blocked version replaced by `notice(version,
 * ruleId)` (tarball-notice.ts); every other field as rendered.
 */
export async function pointAtNotices(
  packument: Packument,
  blocked: ReadonlyMap<string, Decision>,
  notice: (version: string, ruleId: string) => string,
  slice = new TimeSlice(),
): Promise<Packument> {
  const versions: Record<string, Manifest> = {}
  await eachOwn(
    packument.versions ?? {},
    (version, manifest) => {
      const decision = blocked.get(version)
      setOwn(
        versions,
        version,
        decision === undefined
          ? manifest
          : { ...manifest, dist: { ...manifest.dist, tarball: notice(version, decision.rule?.id ?? 'unknown') } },
      )
    },
    slice,
  )
  return { ...packument, versions }
}
