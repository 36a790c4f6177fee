import semver from 'semver'
import { TagRepair } from '../../server/registry/npm/tag-repair'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  filterPackument,
  rewriteTarballUrls,
  toAbbreviated,
  type Manifest,
  type Packument,
  type VersionDecision,
} from '../../server/registry/npm/packument'

const UPSTREAM = 'https://registry.npmjs.org'

function manifest(name: string, version: string, extra: Partial<Manifest> = {}): Manifest {
  const file = `${name.replace(/^@[^/]+\//, '')}-${version}.tgz`
  return {
    name,
    version,
    dist: { tarball: `${UPSTREAM}/${name}/-/${file}`, integrity: `sha512-${version}`, shasum: 'abc' },
    ...extra,
  }
}

function packument(name: string, versions: string[], distTags: Record<string, string>): Packument {
  return {
    name,
    'dist-tags': distTags,
    versions: Object.fromEntries(versions.map((v) => [v, manifest(name, v)])),
    time: {
      created: '2020-01-01T00:00:00.000Z',
      modified: '2025-01-01T00:00:00.000Z',
      ...Object.fromEntries(versions.map((v) => [v, '2024-01-01T00:00:00.000Z'])),
    },
    readme: 'hello',
  }
}

const blocking =
  (...blocked: string[]) =>
  (version: string): VersionDecision =>
    blocked.includes(version)
      ? { outcome: 'blocked', rule: { id: 'too-new' }, message: 'Versions younger than 72h' }
      : { outcome: 'allowed', message: 'no rule matched' }

const doc = packument('pkg', ['1.0.0', '1.1.0', '2.0.0-beta.1', '2.0.0', '2.1.0'], {
  latest: '2.1.0',
  next: '2.0.0-beta.1',
})

describe('filterPackument', () => {
  it('removes blocked versions', async () => {
    expect(Object.keys((await filterPackument(doc, blocking('2.1.0'))).versions ?? {})).toEqual([
      '1.0.0',
      '1.1.0',
      '2.0.0-beta.1',
      '2.0.0',
    ])
  })

  it('removes blocked versions from time but keeps created and modified', async () => {
    const time = (await filterPackument(doc, blocking('2.1.0'))).time ?? {}
    expect([time['2.1.0'], time.created, time.modified]).toEqual([
      undefined,
      '2020-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
    ])
  })

  it('moves latest to the highest remaining stable version below the removed one', async () => {
    expect((await filterPackument(doc, blocking('2.1.0', '2.0.0')))['dist-tags']?.latest).toBe('1.1.0')
  })

  it('moves another tag to the highest remaining version below it, prereleases included', async () => {
    const tagged = { ...doc, 'dist-tags': { latest: '1.1.0', canary: '2.0.0' } }
    expect((await filterPackument(tagged, blocking('2.0.0')))['dist-tags']?.canary).toBe('2.0.0-beta.1')
  })

  it('drops a tag when no remaining version is at or below it', async () => {
    expect((await filterPackument(doc, blocking('2.0.0-beta.1', '1.0.0', '1.1.0')))['dist-tags']).toEqual({
      latest: '2.1.0',
    })
  })

  it('leaves tags pointing at remaining versions alone', async () => {
    expect((await filterPackument(doc, blocking('1.0.0')))['dist-tags']).toEqual({
      latest: '2.1.0',
      next: '2.0.0-beta.1',
    })
  })

  it('lists removed versions with rule and reason', async () => {
    expect((await filterPackument(doc, blocking('2.1.0'))).policyRestrictions).toEqual({
      versions: { '2.1.0': { rule: 'too-new', reason: 'Versions younger than 72h' } },
    })
  })

  it('keeps exception-allowed and logged versions', async () => {
    const decide = (v: string): VersionDecision => ({
      outcome: v === '1.0.0' ? 'exception-allowed' : 'logged',
      message: 'x',
    })
    expect(Object.keys((await filterPackument(doc, decide)).versions ?? {}).length).toBe(5)
  })

  it('keeps other top-level fields', async () => {
    expect((await filterPackument(doc, blocking('2.1.0'))).readme).toBe('hello')
  })

  it('does not modify its input', async () => {
    await filterPackument(doc, blocking('2.1.0'))
    expect(Object.keys(doc.versions ?? {}).length).toBe(5)
  })

  it('passes the manifest to the decision', async () => {
    const seen: string[] = []
    await filterPackument(doc, (_v, m) => {
      seen.push(m.version ?? '')
      return { outcome: 'allowed', message: '' }
    })
    expect(seen).toEqual(['1.0.0', '1.1.0', '2.0.0-beta.1', '2.0.0', '2.1.0'])
  })
})

describe('rewriteTarballUrls', () => {
  const base = 'https://fw.example.com/registry/acme/main/'

  it('points tarballs at the proxy', async () => {
    const { packument: rewritten } = await rewriteTarballUrls(doc, base)
    expect(rewritten.versions?.['1.0.0'].dist?.tarball).toBe(`${base}pkg/-/pkg-1.0.0.tgz`)
  })

  it('keeps @scope/name in the path of a scoped package', async () => {
    const scoped = packument('@acme/ui', ['1.2.3'], { latest: '1.2.3' })
    expect((await rewriteTarballUrls(scoped, base)).packument.versions?.['1.2.3'].dist?.tarball).toBe(
      `${base}@acme/ui/-/ui-1.2.3.tgz`,
    )
  })

  it('keeps integrity and shasum', async () => {
    const dist = (await rewriteTarballUrls(doc, base)).packument.versions?.['2.0.0'].dist
    expect([dist?.integrity, dist?.shasum]).toEqual(['sha512-2.0.0', 'abc'])
  })

  it('maps each rewritten file to the upstream URL', async () => {
    expect((await rewriteTarballUrls(doc, base)).tarballs.get('pkg-2.1.0.tgz')).toBe(`${UPSTREAM}/pkg/-/pkg-2.1.0.tgz`)
  })

  it('derives the file name from name and version when the upstream path is opaque', async () => {
    const opaque = {
      ...doc,
      versions: { '1.0.0': { ...manifest('pkg', '1.0.0'), dist: { tarball: 'https://cdn.example/blob/9f8e7d' } } },
    }
    expect((await rewriteTarballUrls(opaque, base)).tarballs.get('pkg-1.0.0.tgz')).toBe(
      'https://cdn.example/blob/9f8e7d',
    )
  })

  it('adds a missing trailing slash to the base URL', async () => {
    expect((await rewriteTarballUrls(doc, base.slice(0, -1))).packument.versions?.['1.0.0'].dist?.tarball).toBe(
      `${base}pkg/-/pkg-1.0.0.tgz`,
    )
  })

  it('does not modify its input', async () => {
    await rewriteTarballUrls(doc, base)
    expect(doc.versions?.['1.0.0'].dist?.tarball).toBe(`${UPSTREAM}/pkg/-/pkg-1.0.0.tgz`)
  })
})

describe('toAbbreviated', () => {
  const full: Packument = {
    name: 'pkg',
    'dist-tags': { latest: '1.0.0' },
    time: {
      created: '2020-01-01T00:00:00.000Z',
      modified: '2025-01-01T00:00:00.000Z',
      '1.0.0': '2024-01-01T00:00:00.000Z',
    },
    readme: 'long text',
    maintainers: [{ name: 'x' }],
    versions: {
      '1.0.0': manifest('pkg', '1.0.0', {
        dependencies: { a: '^1.0.0' },
        peerDependencies: { react: '*' },
        bin: { pkg: 'cli.js' },
        engines: { node: '>=18' },
        scripts: { postinstall: 'node setup.js', test: 'vitest' },
        description: 'a package',
        readme: 'long text',
        license: 'MIT',
        bundledDependencies: ['a'],
      }),
    },
  }
  let abbreviated: Awaited<ReturnType<typeof toAbbreviated>>
  beforeAll(async () => {
    abbreviated = await toAbbreviated(full)
  })

  it('keeps only name, modified, dist-tags and versions at the top level', async () => {
    expect(Object.keys(abbreviated).sort()).toEqual(['dist-tags', 'modified', 'name', 'versions'])
  })

  it('takes modified from time.modified', async () => {
    expect(abbreviated.modified).toBe('2025-01-01T00:00:00.000Z')
  })

  it('keeps install-relevant version fields', async () => {
    expect(abbreviated.versions['1.0.0']).toMatchObject({
      name: 'pkg',
      version: '1.0.0',
      dependencies: { a: '^1.0.0' },
      peerDependencies: { react: '*' },
      bin: { pkg: 'cli.js' },
      engines: { node: '>=18' },
      license: 'MIT',
    })
  })

  it('drops scripts, description and readme from versions', async () => {
    expect(['description', 'readme', 'scripts'].filter((k) => k in abbreviated.versions['1.0.0'])).toEqual([])
  })

  it('sets hasInstallScript from install scripts', async () => {
    expect(abbreviated.versions['1.0.0'].hasInstallScript).toBe(true)
  })

  it('spells bundledDependencies as bundleDependencies', async () => {
    expect(abbreviated.versions['1.0.0'].bundleDependencies).toEqual(['a'])
  })

  it('keeps the rewritten dist', async () => {
    expect(abbreviated.versions['1.0.0'].dist).toEqual(full.versions?.['1.0.0'].dist)
  })

  it('keeps policyRestrictions so hidden versions stay explainable', async () => {
    const filtered = await filterPackument(doc, blocking('2.1.0'))
    expect((await toAbbreviated(filtered)).policyRestrictions).toEqual(filtered.policyRestrictions)
  })
})

describe('TagRepair (dist-tags of hidden versions)', () => {
  it('finds the highest remaining version at or below, releases only for latest, the first of equal ones', async () => {
    const repair = await TagRepair.of(['2.0.0-rc.1', '1.0.0+b', '1.0.0+a', 'junk', '0.9.0', '1.5.0-beta'])
    expect(repair.target('next', '2.0.0')).toBe('2.0.0-rc.1')
    expect(repair.target('latest', '2.0.0')).toBe('1.0.0+b')
    expect(repair.target('latest', '0.8.0')).toBeUndefined()
    expect(repair.target('latest', 'not-semver')).toBeUndefined()
  })

  it('repairs tags over 20,000 versions as the per-tag search did', async () => {
    const versions = Array.from({ length: 20_000 }, (_, i) => `${i % 50}.${i % 7}.${i}${i % 5 === 0 ? '-pre' : ''}`)
    const repair = await TagRepair.of(versions)
    for (let t = 0; t < 20; t++) {
      const removed = `${(t * 7) % 60}.3.${t * 1100}`
      const tag = t % 2 ? 'latest' : `tag${t}`
      const expected = versions
        .filter((v) => semver.lte(v, removed) && (tag !== 'latest' || semver.prerelease(v) === null))
        .sort(semver.rcompare)[0]
      expect(repair.target(tag, removed)).toBe(expected)
    }
  })
})
