import { describe, expect, it } from 'vitest'
import { renderRegistration, visibleLeaves, type RegistrationLeaf } from '../../server/registry/nuget/registration'
import { TimeSlice } from '../../server/common/time-slice'

/** The registration index the NuGet proxy renders from an upstream's leaves, however many it lists. */

const leaf = (version: string): RegistrationLeaf => ({ catalogEntry: { id: 'Fw.Pkg', version } })

/** A slice that never gives up its turn and counts how often it was asked to. */
function countingSlice(): TimeSlice & { steps: number } {
  return new (class extends TimeSlice {
    steps = 0
    override async step() {
      this.steps++
    }
  })()
}

type Rendered = { count: number; items: { lower: string; upper: string; count: number; items: RegistrationLeaf[] }[] }

describe('renderRegistration', () => {
  it('lists the leaves in NuGet order with the proxy URLs, lower and upper from the ends', async () => {
    const rendered = (await renderRegistration('http://proxy/', 'fw.pkg', [
      leaf('1.10.0'),
      leaf('1.0.0-beta'),
      leaf('1.9.0'),
      leaf('1.0.0'),
    ])) as Rendered
    const page = rendered.items[0]
    expect(page.items.map((item) => item.catalogEntry.version)).toEqual(['1.0.0-beta', '1.0.0', '1.9.0', '1.10.0'])
    expect([page.lower, page.upper, page.count]).toEqual(['1.0.0-beta', '1.10.0', 4])
    expect(page.items[1].packageContent).toBe('http://proxy/v3-flatcontainer/fw.pkg/1.0.0/fw.pkg.1.0.0.nupkg')
  })

  it('leaves out a version the upstream wrote that is not one, instead of failing the index', async () => {
    const rendered = (await renderRegistration('http://proxy/', 'fw.pkg', [
      leaf('not-a-version'),
      leaf('2.0.0'),
      leaf('1.0.0'),
    ])) as Rendered
    const page = rendered.items[0]
    expect(page.items.map((item) => item.catalogEntry.version)).toEqual(['1.0.0', '2.0.0'])
    expect([page.lower, page.upper, page.count]).toEqual(['1.0.0', '2.0.0', 2])
  })

  it('renders an empty index for no leaves', async () => {
    expect(await renderRegistration('http://proxy/', 'fw.pkg', [])).toEqual({
      '@id': 'http://proxy/v3/registration/fw.pkg/index.json',
      count: 0,
      items: [],
    })
  })

  it('takes turns over an upstream listing 20,000 versions, and still sorts them', async () => {
    const versions = Array.from({ length: 20_000 }, (_, i) => `${i % 100}.${Math.floor(i / 100)}.0`)
    const slice = countingSlice()
    const rendered = (await renderRegistration('http://proxy/', 'fw.pkg', versions.map(leaf), slice)) as Rendered
    const listed = rendered.items[0].items.map((item) => item.catalogEntry.version)
    expect(listed).toHaveLength(20_000)
    expect(listed.slice(0, 3)).toEqual(['0.0.0', '0.1.0', '0.2.0'])
    expect(listed.at(-1)).toBe('99.199.0')
    // Reading and rewriting the leaves ask every 256 leaves each; the merge sort more often.
    expect(slice.steps).toBeGreaterThan(2 * Math.floor(20_000 / 256))
  })
})

describe('visibleLeaves', () => {
  it('keeps the visible leaves in their order, taking turns every 256', async () => {
    const slice = countingSlice()
    const leaves = Array.from({ length: 1_000 }, (_, i) => leaf(`1.0.${i}`))
    const kept = await visibleLeaves(leaves, (l) => l.catalogEntry.version.endsWith('0'), slice)
    expect(kept.map((l) => l.catalogEntry.version).slice(0, 3)).toEqual(['1.0.0', '1.0.10', '1.0.20'])
    expect(kept).toHaveLength(100)
    expect(slice.steps).toBe(Math.floor(1_000 / 256))
  })
})
