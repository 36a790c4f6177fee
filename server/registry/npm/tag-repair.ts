import semver, { type SemVer } from 'semver'
import { sortCooperatively } from '../../common/cooperative-sort'
import { TimeSlice } from '../../common/time-slice'

/**
 * Where dist-tags go when the version they name is hidden: the highest remaining version at or
 * below it (for `latest`, the highest such non-prerelease, since npm installs `latest` by
 * default); `undefined` drops the tag. The remaining versions are parsed and sorted once
 * (cooperatively: an upstream decides how many there are and how many tags point at hidden
 * ones), then each tag is a binary search.
 */
export class TagRepair {
  private constructor(
    /** Valid remaining versions, ascending; equal ones (build metadata) in packument order. */
    private readonly sorted: { text: string; version: SemVer }[],
    /** For each index, the first index of the run of versions equal to it. */
    private readonly runStart: number[],
    /** For each index, the highest index at or below it holding a release (no prerelease), or -1. */
    private readonly release: number[],
  ) {}

  /** @example (await TagRepair.of(['1.0.0', '1.1.0'])).target('latest', '2.0.0') // '1.1.0' */
  static async of(remaining: readonly string[], slice = new TimeSlice()): Promise<TagRepair> {
    const parsed: { text: string; version: SemVer }[] = []
    for (const text of remaining) {
      const version = semver.parse(text)
      if (version) parsed.push({ text, version })
      await slice.step()
    }
    const sorted = await sortCooperatively(parsed, (a, b) => a.version.compare(b.version), slice)
    const runStart: number[] = []
    const release: number[] = []
    for (let i = 0; i < sorted.length; i++) {
      const tied = i > 0 && sorted[i - 1].version.compare(sorted[i].version) === 0
      runStart.push(tied ? runStart[i - 1] : i)
      release.push(sorted[i].version.prerelease.length === 0 ? i : i > 0 ? release[i - 1] : -1)
      if ((i & 1023) === 0) await slice.step()
    }
    return new TagRepair(sorted, runStart, release)
  }

  /** The new target of `tag`, which named the hidden version `removed`. */
  target(tag: string, removed: string): string | undefined {
    const ceiling = semver.parse(removed)
    if (ceiling === null) return undefined
    // The last index whose version is at or below the ceiling.
    let lo = 0
    let hi = this.sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.sorted[mid].version.compare(ceiling) <= 0) lo = mid + 1
      else hi = mid
    }
    let at = lo - 1
    if (at >= 0 && tag === 'latest') at = this.release[at]
    // Of equal versions, the first listed (as a stable sort, highest first, would pick it).
    return at >= 0 ? this.sorted[this.runStart[at]].text : undefined
  }
}
