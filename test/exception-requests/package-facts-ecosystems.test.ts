import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { LocalBackend } from '../../storage'
import { RegistryCacheStore } from '../../storage/repositories/registry-cache'
import { systemClock } from '../../server/common/clock'
import type { Ecosystem, Firewall } from '../../server/firewall/schema'
import { packageVersions, type PackageVersionPorts } from '../../server/registry/package-versions'
import { createUpstreamTransport } from '../../server/registry/upstream/transport'
import { versionsOfPage } from '../../server/registry/pypi/versions'
import { declaredLicense, displayLicense } from '../../server/registry/pypi/license'
import { metadataPath, metadataRelease } from '../../server/registry/maven/versions'
import { assemblePackageFacts } from '../../server/exception-requests/package-facts'
import { factsPanel } from '../../server/dashboard/facts-panel'
import { startPypiUpstream, type PypiUpstream } from '../support/pypi-upstream'
import { startMavenUpstream, type MavenUpstream } from '../support/maven-upstream'
import { startNugetUpstream, type NugetUpstream } from '../support/nuget-upstream'
import { nupkg, wheel } from '../fixtures/ecosystems/packages'

describe('PyPI facts mapping', () => {
  const file = (filename: string, extra: Record<string, unknown> = {}) => ({
    filename,
    url: `https://files.example/${filename}`,
    hashes: {},
    ...extra,
  })

  it('groups files by version: earliest upload time, wheels or source only, yanked when every file is', () => {
    const versions = versionsOfPage(
      {
        name: 'Demo',
        files: [
          file('demo-1.0.tar.gz', { uploadTime: '2024-01-02T00:00:00Z' }),
          file('demo-1.0-py3-none-any.whl', { uploadTime: '2024-01-01T00:00:00Z' }),
          file('demo-1.1.tar.gz', { uploadTime: '2024-02-01T00:00:00Z', yanked: 'broken build' }),
          file('demo-1.2.tar.gz'),
          file('not-a-distribution.txt'),
        ],
      },
      'demo',
    )
    expect(versions).toEqual([
      {
        ecosystem: 'pypi',
        packageName: 'Demo',
        version: '1.0',
        published: '2024-01-01T00:00:00Z',
        installNote: expect.stringContaining('wheel'),
      },
      {
        ecosystem: 'pypi',
        packageName: 'Demo',
        version: '1.1',
        published: '2024-02-01T00:00:00Z',
        deprecated: 'yanked: broken build',
        installNote: expect.stringContaining('source only'),
      },
      { ecosystem: 'pypi', packageName: 'Demo', version: '1.2', installNote: expect.stringContaining('source only') },
    ])
  })

  it('reads the license from license_expression, then license, then the License classifiers', () => {
    expect(displayLicense({ license_expression: 'MIT', license: 'BSD' })).toBe('MIT')
    expect(displayLicense({ license: 'Apache 2.0\n\nfull text follows' })).toBe('Apache 2.0')
    expect(
      displayLicense({
        license: '',
        classifiers: [
          'License :: OSI Approved :: MIT License',
          'Programming Language :: Python',
          'License :: OSI Approved :: Apache Software License',
        ],
      }),
    ).toBe('MIT License OR Apache Software License')
    expect(displayLicense({ classifiers: ['Programming Language :: Python'] })).toBeUndefined()
    // Rules read only the declared fields: a classifier is no SPDX expression.
    expect(declaredLicense({ classifiers: ['License :: OSI Approved :: MIT License'] })).toBeUndefined()
  })
})

describe('Maven facts mapping', () => {
  it('addresses the artifact-level metadata of groupId:artifactId and reads its release', () => {
    expect(metadataPath('com.acme.tools:lib')).toBe('com/acme/tools/lib/maven-metadata.xml')
    expect(metadataPath('no-group')).toBeNull()
    expect(metadataRelease('<metadata><versioning><release> 2.0 </release></versioning></metadata>')).toBe('2.0')
    expect(metadataRelease('<metadata/>')).toBeUndefined()
  })
})

describe('facts panel data through a real upstream on loopback', () => {
  const backend = new LocalBackend(createStorage())
  const transport = createUpstreamTransport({ allowedNetworks: ['127.0.0.1/32'], deniedNetworks: [] })
  const services: PackageVersionPorts = {
    clock: systemClock,
    registryCache: new RegistryCacheStore(backend),
    upstreamTransport: transport,
  }
  const firewall = (ecosystem: Ecosystem, endpoint: string): Firewall => ({
    id: `fw-${ecosystem}`,
    version: 1,
    ecosystem,
    name: ecosystem,
    description: '',
    upstreams: [{ id: `${ecosystem}-up`, endpoint, internal: false, cached: true }],
    rules: [],
    exceptions: [],
    permissions: {},
    extends: [],
    updatedAt: '2026-01-01T00:00:00Z',
  })
  const now = Date.parse('2026-01-01T00:00:00Z')
  const panel = (upstream: Awaited<ReturnType<typeof packageVersions>>, packageName: string, version: string) =>
    assemblePackageFacts({
      packageName,
      version,
      now,
      upstream,
      advisoriesOf: () => ({ malware: [], vulnerabilities: [] }),
      blocks: [],
      windowDays: 30,
      otherPending: [],
    })

  let pypi: PypiUpstream
  let maven: MavenUpstream
  let nuget: NugetUpstream
  beforeAll(async () => {
    ;[pypi, maven, nuget] = await Promise.all([
      startPypiUpstream(),
      startMavenUpstream(),
      startNugetUpstream({ apiKey: 'k' }),
    ])
  })
  afterAll(async () => {
    await Promise.all([pypi.close(), maven.close(), nuget.close(), transport.close(), backend.close()])
  })

  it('PyPI: versions with upload times, the requested release’s license, wheel or source only', async () => {
    const w = wheel('demo-pkg', '1.0.0')
    pypi.add('demo-pkg', w.filename, w.bytes, '2025-06-01T00:00:00Z')
    pypi.add('demo-pkg', 'demo_pkg-1.1.0.tar.gz', Buffer.from('sdist'), '2025-12-25T00:00:00Z')
    pypi.setInfo('demo-pkg', '1.1.0', { license_expression: 'Apache-2.0' })
    const answer = await packageVersions(
      services,
      'default',
      firewall('pypi', `${pypi.url}/simple/`),
      'Demo_Pkg',
      '1.1.0',
    )
    const facts = panel(answer, 'demo-pkg', '1.1.0')
    expect(facts.upstream).toMatchObject({
      state: 'found',
      upstream: 'pypi-up',
      notes: { license: expect.any(String) },
    })
    expect(facts.versions.map((v) => [v.version, v.published, v.license])).toEqual([
      ['1.1.0', '2025-12-25T00:00:00Z', 'Apache-2.0'],
      ['1.0.0', '2025-06-01T00:00:00Z', undefined],
    ])
    expect(facts.requested).toMatchObject({ version: '1.1.0', age: '1 week', installScripts: [] })
    expect(facts.requested?.installNote).toMatch(/source only/)
    expect(facts.versions[1].installNote).toMatch(/wheel/)
    expect(
      panel(await packageVersions(services, 'default', firewall('pypi', pypi.url), 'absent', '1.0'), 'absent', '1.0')
        .upstream,
    ).toEqual({ state: 'not_found' })
  })

  it('NuGet: versions with their registration’s published time and license expression', async () => {
    nuget.add('Acme.Lib', '1.0.0', nupkg('Acme.Lib', '1.0.0', 'MIT'), '2025-01-01T00:00:00Z')
    nuget.add('Acme.Lib', '2.0.0', nupkg('Acme.Lib', '2.0.0', 'Apache-2.0'), '2025-12-01T00:00:00Z')
    const answer = await packageVersions(services, 'default', firewall('nuget', nuget.index), 'Acme.Lib', '2.0.0')
    const facts = panel(answer, 'Acme.Lib', '2.0.0')
    expect(facts.upstream).toMatchObject({ state: 'found', upstream: 'nuget-up' })
    expect(facts.versions.map((v) => [v.version, v.published, v.license])).toEqual([
      ['2.0.0', '2025-12-01T00:00:00Z', 'Apache-2.0'],
      ['1.0.0', '2025-01-01T00:00:00Z', 'MIT'],
    ])
    expect(facts.requested).toMatchObject({ version: '2.0.0', age: '1 month', requested: true })
    expect(facts.upstream.state === 'found' && facts.upstream.notes?.installScripts).toMatch(/no install scripts/)
  })

  it('Maven: the versions maven-metadata.xml lists, its release as latest, the requested version’s POM date, plain notes for the rest', async () => {
    const xml = `<?xml version="1.0"?>
<metadata><groupId>com.acme</groupId><artifactId>lib</artifactId><versioning>
  <release>1.1</release>
  <versions><version>1.0</version><version>1.1</version><version>2.0-SNAPSHOT</version></versions>
</versioning></metadata>`
    maven.files.set('com/acme/lib/maven-metadata.xml', { bytes: Buffer.from(xml), modified: new Date(now) })
    maven.files.set('com/acme/lib/1.0/lib-1.0.pom', {
      bytes: Buffer.from('<project/>'),
      modified: new Date('2025-11-01T00:00:00Z'),
    })
    const answer = await packageVersions(services, 'default', firewall('maven', maven.url), 'com.acme:lib', '1.0')
    const facts = panel(answer, 'com.acme:lib', '1.0')
    expect(facts.upstream).toMatchObject({
      state: 'found',
      upstream: 'maven-up',
      notes: { published: expect.stringMatching(/not published by Maven/), license: expect.any(String) },
    })
    // Dates for one version only: listed order, newest (last listed) first.
    expect(facts.versions.map((v) => [v.version, v.latest, v.requested])).toEqual([
      ['2.0-SNAPSHOT', false, false],
      ['1.1', true, false],
      ['1.0', false, true],
    ])
    // The requested version's date is its POM's Last-Modified, as the proxy's rules read it.
    expect(facts.requested?.published).toBe('2025-11-01T00:00:00.000Z')
    expect(facts.versions[0].published).toBeUndefined()
    // The panel says why a fact is missing instead of "none declared".
    const page = String(factsPanel(facts, 'default', 'fw-maven'))
    expect(page).toContain('Publish dates: not published by Maven')
    expect(page).toContain('not given')
    expect(page).not.toContain('none declared')
  })
})
