import { describe, expect, it } from 'vitest'
import { filterMetadata, mergeMetadata, metadataVersions, TooManyVersions } from '../../server/registry/maven/metadata'

/** maven-metadata.xml as the proxy filters and merges it: the same document, found in one pass. */

const doc = (versions: string[], extra = '') => `<?xml version="1.0" encoding="UTF-8"?>
<metadata>
  <groupId>com.example</groupId>
  <artifactId>lib</artifactId>
  <versioning>
    <latest>2.0-SNAPSHOT</latest>
    <release>1.1</release>
    <versions>
${versions.map((v) => `      <version>${v}</version>`).join('\n')}
    </versions>${extra}
    <lastUpdated>20260101000000</lastUpdated>
  </versioning>
</metadata>
`

describe('maven-metadata.xml', () => {
  it('lists the versions in document order', () => {
    expect(metadataVersions(doc(['1.0', '1.1', '2.0-SNAPSHOT']))).toEqual(['1.0', '1.1', '2.0-SNAPSHOT'])
    expect(metadataVersions('<metadata/>')).toEqual([])
  })

  it('hides versions and moves latest and release to what is left, the rest as written', async () => {
    const filtered = await filterMetadata(doc(['1.0', '1.1', '2.0-SNAPSHOT']), (v) => v !== '1.1')
    expect(filtered).toBe(doc(['1.0', '2.0-SNAPSHOT']).replace('<release>1.1</release>', '<release>1.0</release>'))
    const unchanged = doc(['1.0', '1.1'])
    expect(await filterMetadata(unchanged, () => true)).toBe(unchanged)
  })

  it('removes release with its line when only snapshots are left, and takes the last of equal versions', async () => {
    const filtered = await filterMetadata(doc(['1.0', '1.0.0', '2.0-SNAPSHOT']), (v) => v !== '2.0-SNAPSHOT')
    expect(filtered).toContain('<latest>1.0.0</latest>')
    const snapshots = await filterMetadata(doc(['1.0', '2.0-SNAPSHOT']), (v) => v !== '1.0')
    expect(snapshots).not.toContain('release')
    expect(snapshots).toContain('  <versioning>\n    <latest>2.0-SNAPSHOT</latest>\n    <versions>')
  })

  it('refuses an upstream document past its bound of versions', async () => {
    const many = doc(Array.from({ length: 101 }, (_, i) => `1.${i}`))
    expect(() => metadataVersions(many, 100)).toThrow(TooManyVersions)
    await expect(filterMetadata(many, () => true, 100)).rejects.toThrow(TooManyVersions)
    expect(metadataVersions(many, 101)).toHaveLength(101)
  })

  it('reads hostile documents in one pass: open blocks never closed, long runs of blanks', async () => {
    // Each was quadratic with the lazy or blank-led patterns: these finish in one pass.
    expect(metadataVersions('<versions>'.repeat(2_000_000))).toEqual([])
    const blanks = doc(['1.0', '1.1']).replace('<release>', `${' '.repeat(5_000_000)}<release>`)
    const filtered = await filterMetadata(blanks, (v) => v === '1.0')
    expect(filtered).toContain('<release>1.0</release>')
    expect(filtered.length).toBeLessThan(blanks.length)
  })

  it('merges a deploy into what is stored without losing versions the client was not shown', () => {
    const merged = mergeMetadata(doc(['1.0', '1.2']), doc(['1.0', '1.1']))
    expect(metadataVersions(merged)).toEqual(['1.0', '1.1', '1.2'])
    expect(merged).toContain('<latest>1.2</latest>')
  })
})
